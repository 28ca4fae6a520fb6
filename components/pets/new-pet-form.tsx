"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { createPetFromForm } from "@/app/dashboard/pets/actions";
import { Card, FieldErrors, inputClass } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { notify } from "@/components/ui/toast";
import type { Species } from "@/lib/generated/prisma/enums";
import { MetadataFields, usePetMetadata } from "./metadata-fields";

/** Create a pet, then go straight to registering its nose images. */
export function NewPetForm({ petFields, defaultSpecies = "DOG" }: { petFields: string[]; defaultSpecies?: Species }) {
  const router = useRouter();
  const metadata = usePetMetadata(null, petFields);
  const [fields, setFields] = useState<Record<string, string[]> | undefined>();
  const [busy, setBusy] = useState(false);
  const encoded = metadata.encoded();

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (encoded === null) return;
    const form = new FormData(event.currentTarget);
    setBusy(true);
    const result = await createPetFromForm({ species: form.get("species"), breed: form.get("breed"), metadata: encoded === "{}" ? "" : encoded });
    setFields(result.ok ? undefined : result.error.fields);
    if (notify(result, "Pet created: now register its nose images.") && result.ok) {
      router.push(`/dashboard/capture/register?petId=${result.data.id}`);
      return;
    }
    setBusy(false);
  }

  return (
    <Card title="New pet">
      <form onSubmit={submit} className="grid gap-4 md:grid-cols-[12rem_1fr]" aria-label="New pet" id="new-pet">
        <div className="space-y-3">
          <div>
            <label htmlFor="new-species" className="mb-1 block text-sm font-medium">
              Species
            </label>
            <select id="new-species" name="species" className={inputClass} defaultValue={defaultSpecies}>
              <option value="DOG">Dog</option>
              <option value="CAT">Cat</option>
            </select>
            <FieldErrors errors={fields?.species} />
          </div>
          <div>
            <label htmlFor="new-breed" className="mb-1 block text-sm font-medium">
              Breed
            </label>
            <input id="new-breed" name="breed" className={inputClass} maxLength={200} />
            <FieldErrors errors={fields?.breed} />
          </div>
        </div>
        <div>
          <MetadataFields idPrefix="new" state={metadata} />
          <FieldErrors errors={fields?.metadata} />
          {encoded === null && metadata.jsonError === null && <p className="mt-1 text-sm text-red-700">The other metadata must be a JSON object: {"{ … }"}.</p>}
        </div>
        <div className="flex flex-wrap items-center gap-3 md:col-span-2">
          <Button type="submit" disabled={busy || encoded === null}>
            {busy ? "Creating…" : "Create and register nose images"}
          </Button>
        </div>
      </form>
    </Card>
  );
}
