"use server";

import { revalidatePath } from "next/cache";
import { runAction } from "@/lib/dashboard/run-action";
import { createPetAction, deletePetAction, updatePetAction } from "@/lib/dashboard/pets";

export async function createPet(input: unknown) {
  return runAction(createPetAction, input);
}

export async function updatePet(input: unknown) {
  const result = await runAction(updatePetAction, input);
  if (result.ok) revalidatePath(`/dashboard/pets/${result.data.petId}`);
  return result;
}

export async function deletePet(input: unknown) {
  const result = await runAction(deletePetAction, input);
  if (result.ok) revalidatePath("/dashboard/pets");
  return result;
}
