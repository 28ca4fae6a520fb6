"use server";

import { revalidatePath } from "next/cache";
import { setAccountSuspendedAction } from "@/lib/dashboard/operator";
import { runAction } from "@/lib/dashboard/run-action";

export async function setAccountSuspended(input: unknown) {
  const result = await runAction(setAccountSuspendedAction, input);
  if (result.ok) revalidatePath("/dashboard/accounts");
  return result;
}
