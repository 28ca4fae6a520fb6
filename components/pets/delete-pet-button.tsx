"use client";

import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { deletePet } from "@/app/dashboard/pets/actions";
import { dangerButtonClass, Notice, secondaryButtonClass } from "@/components/dashboard/ui";

/** Deletion cannot be undone (images and enrolment go too), so it asks first, in a modal dialog. */
export function DeletePetButton({ petId }: { petId: string }) {
  const router = useRouter();
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function confirm() {
    setBusy(true);
    const result = await deletePet({ petId });
    setBusy(false);
    if (result.ok) {
      dialog.current?.close();
      router.push("/dashboard/pets");
      return;
    }
    setError(result.error.message);
  }

  return (
    <>
      <button type="button" className={dangerButtonClass} onClick={() => dialog.current?.showModal()}>
        Delete
      </button>
      <dialog ref={dialog} className="m-auto max-w-md rounded-lg p-6 backdrop:bg-slate-900/40" aria-labelledby="delete-title">
        <h2 id="delete-title" className="text-lg font-semibold">
          Delete this pet?
        </h2>
        <p className="mt-2 text-sm text-slate-600">Its nose images, photos and jobs are deleted too. This cannot be undone.</p>
        {error && (
          <div className="mt-3">
            <Notice tone="error">{error}</Notice>
          </div>
        )}
        <div className="mt-4 flex justify-end gap-2">
          <button type="button" className={secondaryButtonClass} onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" className={dangerButtonClass} onClick={confirm} disabled={busy}>
            {busy ? "Deleting…" : "Delete pet"}
          </button>
        </div>
      </dialog>
    </>
  );
}
