"use server";

import { changePasswordAction } from "@/lib/dashboard/profile";
import { runAction } from "@/lib/dashboard/run-action";

export async function changePassword(input: unknown) {
  return runAction(changePasswordAction, input);
}
