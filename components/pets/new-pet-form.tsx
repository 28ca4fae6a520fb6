"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { createPet } from "@/app/dashboard/pets/actions";
import { buttonClass, Card, FieldErrors, inputClass, Notice } from "@/components/dashboard/ui";
import { JsonEditor } from "./json-editor";

/** Create a pet, then go straight to registering its nose images. */
export function NewPetForm() {
  const router = useRouter();
  const [metadata, setMetadata] = useState('{\n  "name": ""\n}');
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [error, setError] = useState<{ message: string; fields?: Record<string, string[]> } | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (jsonError) return;
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    const result = await createPet({ species: form.get("species"), breed: form.get("breed"), metadata });
    if (result.ok) {
      router.push(`/dashboard/capture/register?petId=${result.data.id}`);
      return;
    }
    setBusy(false);
    setError(result.error);
  }

  return (
    <Card title="New pet">
      <form onSubmit={submit} className="grid gap-4 md:grid-cols-[12rem_1fr]" aria-label="New pet">
        <div className="space-y-3">
          <div>
            <label htmlFor="new-species" className="mb-1 block text-sm font-medium">
              Species
            </label>
            <select id="new-species" name="species" className={inputClass} defaultValue="DOG">
              <option value="DOG">Dog</option>
              <option value="CAT">Cat</option>
            </select>
            <FieldErrors errors={error?.fields?.species} />
          </div>
          <div>
            <label htmlFor="new-breed" className="mb-1 block text-sm font-medium">
              Breed
            </label>
            <input id="new-breed" name="breed" className={inputClass} maxLength={200} />
            <FieldErrors errors={error?.fields?.breed} />
          </div>
        </div>
        <div>
          <JsonEditor id="new-metadata" label="Metadata (JSON)" value={metadata} onChange={setMetadata} onValidity={setJsonError} />
          <FieldErrors errors={error?.fields?.metadata} />
        </div>
        <div className="flex flex-wrap items-center gap-3 md:col-span-2">
          <button type="submit" className={buttonClass} disabled={busy || jsonError !== null}>
            {busy ? "Creating…" : "Create and register nose images"}
          </button>
          {error && !error.fields && (
            <Notice tone="error" testId="new-pet-error">
              {error.message}
            </Notice>
          )}
        </div>
      </form>
    </Card>
  );
}
