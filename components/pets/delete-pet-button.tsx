"use client";

import { useRouter } from "next/navigation";
import { deletePetFromForm } from "@/app/dashboard/pets/actions";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { notify } from "@/components/ui/toast";

/** Deletion cannot be undone (images and enrolment go too): the person types the pet's name (or "delete") first. */
export function DeletePetButton({ petId, name }: { petId: string; name: string | null }) {
  const router = useRouter();
  return (
    <ConfirmDialog
      trigger={<Button variant="danger">Delete</Button>}
      title={`Delete ${name ?? "this pet"}?`}
      description="Its nose images, photos and jobs are deleted too. This cannot be undone."
      confirmLabel="Delete pet"
      typeToConfirm={name ?? "delete"}
      onConfirm={async () => {
        const result = await deletePetFromForm({ petId });
        if (notify(result, `${name ?? "The pet"} deleted.`)) router.push("/dashboard/pets");
        return result;
      }}
    />
  );
}
