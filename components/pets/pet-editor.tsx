"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { updatePet } from "@/app/dashboard/pets/actions";
import { buttonClass, Card, FieldErrors, inputClass, Notice } from "@/components/dashboard/ui";
import { JsonEditor } from "./json-editor";

/** Pretty-prints stored metadata for editing when it parses; otherwise shows it as stored. */
function editable(metadata: string | null): string {
  if (metadata === null) return "{}";
  try {
    return JSON.stringify(JSON.parse(metadata), null, 2);
  } catch {
    return metadata;
  }
}

export function PetEditor({ pet, readOnly }: { pet: { id: string; breed: string | null; metadata: string | null }; readOnly: boolean }) {
  const router = useRouter();
  const [metadata, setMetadata] = useState(editable(pet.metadata));
  const [breed, setBreed] = useState(pet.breed ?? "");
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [result, setResult] = useState<{ ok: boolean; message: string; fields?: Record<string, string[]> } | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    const answer = await updatePet({ petId: pet.id, metadata, breed });
    setBusy(false);
    setResult(answer.ok ? { ok: true, message: "Saved." } : { ok: false, ...answer.error });
    if (answer.ok) router.refresh();
  }

  if (readOnly) {
    return (
      <Card title="Metadata">
        <pre className="overflow-x-auto rounded bg-slate-50 p-3 text-sm">{editable(pet.metadata)}</pre>
      </Card>
    );
  }
  return (
    <Card title="Edit">
      <form onSubmit={submit} className="space-y-3" aria-label="Edit pet">
        <div className="max-w-sm">
          <label htmlFor="edit-breed" className="mb-1 block text-sm font-medium">
            Breed
          </label>
          <input id="edit-breed" className={inputClass} value={breed} onChange={(e) => setBreed(e.target.value)} maxLength={200} />
          <FieldErrors errors={result?.fields?.breed} />
        </div>
        <JsonEditor id="edit-metadata" label="Metadata (JSON)" value={metadata} onChange={setMetadata} onValidity={setJsonError} />
        <FieldErrors errors={result?.fields?.metadata} />
        <div className="flex flex-wrap items-center gap-3">
          <button type="submit" className={buttonClass} disabled={busy || jsonError !== null || metadata.trim() === ""}>
            {busy ? "Saving…" : "Save"}
          </button>
          {result && (
            <Notice tone={result.ok ? "success" : "error"} testId="pet-save-result">
              {result.message}
            </Notice>
          )}
        </div>
      </form>
    </Card>
  );
}
