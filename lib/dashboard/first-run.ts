import { completeFirstRun, FirstRunClosedError, firstRunSchema, needsFirstRun } from "@/lib/accounts/first-run";
import { getDb } from "@/lib/db";
import { failure, fieldErrors, type ActionResult } from "./action-client";

/** The /setup page's service: open only while no user exists (lib/accounts/first-run.ts). */
export async function isFirstRun(): Promise<boolean> {
  return needsFirstRun(await getDb());
}

/** No session exists yet, so this is the one action outside the signed-in chain: the form, checked, once. */
export async function firstRunAction(raw: unknown): Promise<ActionResult<{ accountId: string; apiKey: string }>> {
  const parsed = firstRunSchema.safeParse(raw);
  if (!parsed.success) return failure("Some fields are not valid.", fieldErrors(parsed.error));
  try {
    return { ok: true, data: await completeFirstRun(await getDb(), parsed.data) };
  } catch (error) {
    if (error instanceof FirstRunClosedError) return failure(error.message);
    throw error;
  }
}
