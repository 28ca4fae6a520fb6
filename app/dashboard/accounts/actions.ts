"use server";

import { revalidatePath } from "next/cache";
import { createAccountAction, createUserAction, setAccountPlanAction, setAccountSuspendedAction } from "@/lib/dashboard/operator";
import { runAction } from "@/lib/dashboard/run-action";

async function andRefresh<T extends { ok: boolean }>(result: Promise<T>): Promise<T> {
  const answer = await result;
  if (answer.ok) revalidatePath("/dashboard/accounts");
  return answer;
}

export async function setAccountSuspended(input: unknown) {
  return andRefresh(runAction(setAccountSuspendedAction, input));
}
export async function createAccount(input: unknown) {
  return andRefresh(runAction(createAccountAction, input));
}
export async function setAccountPlan(input: unknown) {
  return andRefresh(runAction(setAccountPlanAction, input));
}
export async function createUser(input: unknown) {
  return andRefresh(runAction(createUserAction, input));
}
