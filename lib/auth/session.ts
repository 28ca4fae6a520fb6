import { getServerSession } from "next-auth";
import { notFound, redirect } from "next/navigation";
import type { UserRole } from "@/lib/accounts/users";
import { getDb } from "@/lib/db";
import type { Db } from "@/lib/db/connect";
import { authOptions } from "./options";
import { can, type Capability } from "./roles";
import { SIGN_IN_PATH } from "./secret";

export interface SessionUser {
  id: string;
  email: string;
  role: UserRole;
  /** Null only for operators (admin), who act across accounts. */
  accountId: string | null;
}

/** The signed-in user as the database has them now, or null (no session, expired, user removed). */
export async function getSessionUser(db?: Db): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions());
  const id = (session?.user as { id?: string } | undefined)?.id;
  if (!id) return null;
  return (db ?? (await getDb())).user.findUnique({ where: { id }, select: { id: true, email: true, role: true, accountId: true } });
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
