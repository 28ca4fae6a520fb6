import { getServerSession } from "next-auth";
import { notFound, redirect } from "next/navigation";
import { getDb } from "@/lib/db";
import type { Db } from "@/lib/db/connect";
import { authOptions } from "./options";
import { can, type Capability } from "./roles";
import { SIGN_IN_PATH } from "./secret";
import { userOfSession, type SessionUser } from "./session-version";

export type { SessionUser } from "./session-version";

/** The signed-in user as the database has them now, or null (no session, expired, signed out, user removed). */
export async function getSessionUser(db?: Db): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions());
  return userOfSession(db ?? (await getDb()), session?.user as { id?: string; sessionVersion?: number } | undefined);
}

/**
 * For server pages: the user, who must hold the capability. No session → the sign-in page; a role
 * without the capability → 404, the same answer as for a page that does not exist.
 */
export async function requirePageUser(capability?: Capability): Promise<SessionUser> {
  const user = await getSessionUser();
  if (!user) redirect(SIGN_IN_PATH);
  if (capability && !can(user.role, capability)) notFound();
  return user;
}

/** For pages whose data belongs to one account: the user's account (operators have none here). */
export async function requireAccountUser(capability: Capability): Promise<SessionUser & { accountId: string }> {
  const user = await requirePageUser(capability);
  if (!user.accountId) notFound();
  return user as SessionUser & { accountId: string };
}
