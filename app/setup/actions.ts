"use server";

import { firstRunAction } from "@/lib/dashboard/first-run";

export async function completeSetup(input: unknown) {
  return firstRunAction(input);
}
