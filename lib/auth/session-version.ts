import type { Db } from "@/lib/db/connect";
import type { UserRole } from "@/lib/accounts/users";

// Sessions are JWTs (next-auth), which the server cannot forget on its own: each token carries the
// user's session version from its sign-in, and signing out increments the version, so every token
// issued before (a copied cookie included) stops working at once, on every device.

export interface SessionUser {
  id: string;
  email: string;
  role: UserRole;
  /** Null only for operators (admin), who act across accounts. */
  accountId: string | null;
}

/** The user a session token names, as the database has them now; null when the token's version is not the user's. */
export async function userOfSession(db: Db, token: { id?: string; sessionVersion?: number } | null | undefined): Promise<SessionUser | null> {
  if (!token?.id) return null;
  const user = await db.user.findUnique({ where: { id: token.id }, select: { id: true, email: true, role: true, accountId: true, sessionVersion: true } });
  if (!user || user.sessionVersion !== (token.sessionVersion ?? 0)) return null;
  return { id: user.id, email: user.email, role: user.role, accountId: user.accountId };
}

/** Ends every session of the user (sign-out). */
export async function endSessions(db: Db, userId: string): Promise<void> {
  await db.user.updateMany({ where: { id: userId }, data: { sessionVersion: { increment: 1 } } });
}
