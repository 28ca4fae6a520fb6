"use server";

// The pet forms' server actions: named for the form, not the domain functions they reach (lib/pets/pets.ts).

import { revalidatePath } from "next/cache";
import { runAction } from "@/lib/dashboard/run-action";
import { createPetAction, deletePetAction, updatePetAction } from "@/lib/dashboard/pets";

export async function createPetFromForm(input: unknown) {
  return runAction(createPetAction, input);
}

export async function updatePetFromForm(input: unknown) {
  const result = await runAction(updatePetAction, input);
  if (result.ok) revalidatePath(`/dashboard/pets/${result.data.petId}`);
  return result;
}

export async function deletePetFromForm(input: unknown) {
  const result = await runAction(deletePetAction, input);
  if (result.ok) revalidatePath("/dashboard/pets");
  return result;
}
