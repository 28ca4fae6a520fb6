import type { z } from "zod";
import { getSessionUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { invokeAction, type ActionResult, type DashboardAction } from "./action-client";

/** What a "use server" function calls: the signed-in user from the session, then the chain. */
export async function runAction<S extends z.ZodType, T>(action: DashboardAction<S, T>, raw: unknown): Promise<ActionResult<T>> {
  const db = await getDb();
  return invokeAction(action, db, await getSessionUser(db), raw);
}
