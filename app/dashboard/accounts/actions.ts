"use server";

import { createAccountAction, createUserAction, setAccountPlanAction, setAccountSuspendedAction } from "@/lib/dashboard/operator";
import { runActionAndRefresh } from "@/lib/dashboard/run-action";

const PAGE = "/dashboard/accounts";

export async function setAccountSuspended(input: unknown) {
  return runActionAndRefresh(setAccountSuspendedAction, input, PAGE);
}
export async function createAccount(input: unknown) {
  return runActionAndRefresh(createAccountAction, input, PAGE);
}
export async function setAccountPlan(input: unknown) {
  return runActionAndRefresh(setAccountPlanAction, input, PAGE);
}
export async function createUser(input: unknown) {
  return runActionAndRefresh(createUserAction, input, PAGE);
}
