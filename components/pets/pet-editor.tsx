"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { updatePetFromForm } from "@/app/dashboard/pets/actions";
import { Card, FieldErrors, inputClass } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { notify } from "@/components/ui/toast";
import { UnsavedChangesGuard } from "@/components/ui/unsaved-changes-guard";
import { fieldLabel, splitMetadata } from "@/lib/dashboard/pet-fields";
import { MetadataFields, usePetMetadata } from "./metadata-fields";

type Pet = { id: string; breed: string | null; metadata: string | null };

export function PetEditor({ pet, petFields, readOnly }: { pet: Pet; petFields: string[]; readOnly: boolean }) {
  if (readOnly) return <PetDetailsReadOnly pet={pet} petFields={petFields} />;
  // A fresh editor after each save (the key): the saved values become the new baseline.
  return <Editor key={`${pet.breed}|${pet.metadata}`} pet={pet} petFields={petFields} />;
}

function PetDetailsReadOnly({ pet, petFields }: { pet: Pet; petFields: string[] }) {
  const { fields, rest } = splitMetadata(pet.metadata, petFields);
  return (
    <Card title="Details">
      <dl className="grid grid-cols-[8rem_1fr] gap-y-1 text-sm">
        {petFields.map((key) => (
          <div key={key} className="contents">
            <dt className="text-slate-500">{fieldLabel(key)}</dt>
            <dd className="break-words">{fields[key] || "—"}</dd>
          </div>
        ))}
      </dl>
      <pre className="mt-3 overflow-x-auto rounded bg-slate-50 p-3 text-sm">{rest}</pre>
    </Card>
  );
}

function Editor({ pet, petFields }: { pet: Pet; petFields: string[] }) {
  const router = useRouter();
  const metadata = usePetMetadata(pet.metadata, petFields);
  const [breed, setBreed] = useState(pet.breed ?? "");
  const [errors, setErrors] = useState<Record<string, string[]> | undefined>();
  const [busy, setBusy] = useState(false);
  const encoded = metadata.encoded();
  const dirty = metadata.dirty || breed !== (pet.breed ?? "");

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (encoded === null) return;
    setBusy(true);
    const answer = await updatePetFromForm({ petId: pet.id, metadata: encoded, breed });
    setBusy(false);
    setErrors(answer.ok ? undefined : answer.error.fields);
    if (notify(answer, "Pet saved.")) router.refresh();
  }

  return (
    <Card title="Edit">
      <UnsavedChangesGuard dirty={dirty && !busy} />
      <form onSubmit={submit} className="space-y-3" aria-label="Edit pet">
        <div className="max-w-sm">
          <label htmlFor="edit-breed" className="mb-1 block text-sm font-medium">
            Breed
          </label>
          <input id="edit-breed" className={inputClass} value={breed} onChange={(e) => setBreed(e.target.value)} maxLength={200} />
          <FieldErrors errors={errors?.breed} />
        </div>
        <MetadataFields idPrefix="edit" state={metadata} />
        <FieldErrors errors={errors?.metadata} />
        {encoded === null && metadata.jsonError === null && <p className="text-sm text-red-700">The other metadata must be a JSON object: {"{ … }"}.</p>}
        <div className="flex flex-wrap items-center gap-3">
          <Button type="submit" disabled={busy || encoded === null || !dirty}>
            {busy ? "Saving…" : "Save"}
          </Button>
          {dirty && <span className="text-sm text-amber-800" data-testid="unsaved-marker">Unsaved changes</span>}
        </div>
      </form>
    </Card>
  );
}
