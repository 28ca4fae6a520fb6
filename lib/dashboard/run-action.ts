import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import type { z } from "zod";
import { getSessionUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { invokeAction, type ActionResult, type DashboardAction } from "./action-client";

/** What a "use server" function calls: the signed-in user from the session, then the chain. */
export async function runAction<S extends z.ZodType, T>(action: DashboardAction<S, T>, raw: unknown): Promise<ActionResult<T>> {
  const db = await getDb();
  // The origin is read only by the actions that ask for it (an invitation's link).
  return invokeAction(action, db, await getSessionUser(db), raw, requestOrigin);
}

/** `runAction`, and the page at `path` rendered anew when it worked (a settings panel showing the change). */
export async function runActionAndRefresh<S extends z.ZodType, T>(action: DashboardAction<S, T>, raw: unknown, path: string): Promise<ActionResult<T>> {
  const result = await runAction(action, raw);
  if (result.ok) revalidatePath(path);
  return result;
}

/**
 * The origin the browser used: NEXTAUTH_URL's when set, else the request's own (the forwarded host and scheme
 * when a proxy sets them, as next-auth derives its URLs when NEXTAUTH_URL is unset).
 */
async function requestOrigin(): Promise<string> {
  if (process.env.NEXTAUTH_URL) return new URL(process.env.NEXTAUTH_URL).origin;
  const h = await headers();
  const first = (value: string | null) => value?.split(",")[0]?.trim() || undefined;
  const host = first(h.get("x-forwarded-host")) ?? first(h.get("host")) ?? "localhost";
  const scheme = first(h.get("x-forwarded-proto")) === "https" ? "https" : "http";
  return `${scheme}://${host}`;
}
