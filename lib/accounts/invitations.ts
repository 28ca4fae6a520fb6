import { createHash, randomBytes } from "node:crypto";
import type { Db } from "@/lib/db/connect";
import { logError } from "@/lib/log";
import { sendMail } from "@/lib/mail";
import { recordAudit, type AuditActor } from "./audit";
import { createUser, EmailTakenError, type UserRole } from "./users";

// Team invitations. An owner names an address and a role; the link that lets its holder choose a password goes
// to that address by e-mail only, never to the owner. One address belongs to one account, so an address that
// already signs in elsewhere cannot join: it is told so by e-mail, while the owner sees exactly what any other
// invitation shows (a pending invitation). The owner can therefore not learn from the dashboard which addresses
// have a Rhinarium sign-in in other clinics; before, "a user with this e-mail already exists" told them.

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
/** Pending invitations an account may hold at once (each sends an e-mail: not a mail cannon). */
export const MAX_PENDING_INVITATIONS = 50;
export const INVITE_PATH = "/invite";

export type InvitableRole = Exclude<UserRole, "admin">;

/** An invitation the owner cannot send, for a reason that concerns their own account only. */
export class InvitationRefusedError extends Error {}
/** The e-mail could not be sent (the relay refused or did not answer): no invitation was made. */
export class InvitationNotSentError extends Error {
  constructor(email: string) {
    super(`The e-mail to ${email} could not be sent, so no invitation was made: try again later.`);
  }
}
/** What the holder of a link that is unknown, used, revoked or expired is told (the error's and the invitation page's words). */
export const INVITATION_INVALID_MESSAGE = "This invitation is not valid any more (used, withdrawn or expired): ask your clinic's owner for a new one.";
export class InvitationInvalidError extends Error {
  constructor() {
    super(INVITATION_INVALID_MESSAGE);
  }
}

function tokenHashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function pending(now = new Date()) {
  return { acceptedAt: null, expiresAt: { gt: now } };
}

export interface Invitation {
  accountId: string;
  email: string;
  role: InvitableRole;
  inviter: { id: string; email: string };
}

/**
 * Records the invitation and e-mails the address; the answer is the same whether or not the address signs in elsewhere.
 * Only the e-mail carries the link, so an invitation whose e-mail fails is withdrawn at once (InvitationNotSentError) and
 * nothing else changes: an earlier pending invitation of the address keeps working, and the audit log records none.
 */
export async function inviteMember(db: Db, invitation: Invitation, origin: string): Promise<{ invitationId: string }> {
  const email = invitation.email.toLowerCase();
  const [existing, account, pendingCount] = await Promise.all([
    db.user.findUnique({ where: { email }, select: { accountId: true } }),
    db.account.findUniqueOrThrow({ where: { id: invitation.accountId }, select: { name: true } }),
    db.invitation.count({ where: { accountId: invitation.accountId, ...pending() } }),
  ]);
  if (existing?.accountId === invitation.accountId) throw new InvitationRefusedError("This address is already a member of your team.");
  if (pendingCount >= MAX_PENDING_INVITATIONS) {
    throw new InvitationRefusedError(`Your team has ${MAX_PENDING_INVITATIONS} pending invitations: withdraw some before sending more.`);
  }
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
  const created = await db.invitation.create({
    data: { accountId: invitation.accountId, email, role: invitation.role, tokenHash: tokenHashOf(token), invitedById: invitation.inviter.id, expiresAt },
    select: { id: true, createdAt: true },
  });
  const intro = `${invitation.inviter.email} invited ${email} to join ${account.name} on Rhinarium as ${invitation.role}.`;
  const text = existing
    ? `${intro}\n\nThis address already signs in to Rhinarium for another account, and one address belongs to one account, so it cannot join. If you want to join, reply to ${invitation.inviter.email} with another address to be invited with.\n`
    : `${intro}\n\nChoose your password here (the link works once, until ${expiresAt.toUTCString()}):\n\n${origin}${INVITE_PATH}/${token}\n\nIf you did not expect this, ignore this message.\n`;
  try {
    await sendMail({ to: email, subject: `Join ${account.name} on Rhinarium`, text });
  } catch (error) {
    await db.invitation.delete({ where: { id: created.id } });
    logError("invitation-mail-failed", error, { accountId: invitation.accountId, invitationId: created.id });
    throw new InvitationNotSentError(email);
  }
  await db.$transaction(async (tx) => {
    // Inviting an address again replaces its earlier pending invitation (its link stops working) once the new one is out.
    await tx.invitation.deleteMany({ where: { accountId: invitation.accountId, email, acceptedAt: null, id: { not: created.id }, createdAt: { lte: created.createdAt } } });
    await recordAudit(tx, { kind: "user", userId: invitation.inviter.id, email: invitation.inviter.email }, {
      action: "user.invite",
      accountId: invitation.accountId,
      target: created.id,
      data: { email, role: invitation.role },
    });
  });
  return { invitationId: created.id };
}

/** What the invitation page shows about a link: null when it cannot be accepted. */
export async function invitationOf(db: Db, token: string): Promise<{ email: string; role: InvitableRole; accountName: string } | null> {
  const row = await db.invitation.findFirst({
    where: { tokenHash: tokenHashOf(token), ...pending() },
    select: { email: true, role: true, account: { select: { name: true } } },
  });
  return row ? { email: row.email, role: row.role as InvitableRole, accountName: row.account.name } : null;
}

/**
 * Accepts an invitation once: its holder becomes a user of the account with the invited role and the password they
 * chose. The claim and the user's creation are one transaction, so two racing acceptances make one user.
 */
export async function acceptInvitation(db: Db, token: string, password: string): Promise<{ email: string }> {
  const now = new Date();
  try {
    return await db.$transaction(async (tx) => {
      const row = await tx.invitation.findFirst({ where: { tokenHash: tokenHashOf(token), ...pending(now) }, select: { id: true, accountId: true, email: true, role: true } });
      if (!row) throw new InvitationInvalidError();
      const { count } = await tx.invitation.updateMany({ where: { id: row.id, acceptedAt: null }, data: { acceptedAt: now } });
      if (count !== 1) throw new InvitationInvalidError();
      const user = await createUser(tx, { email: row.email, password, role: row.role, accountId: row.accountId });
      const actor: AuditActor = { kind: "user", userId: user.id, email: user.email };
      await recordAudit(tx, actor, { action: "user.create", accountId: row.accountId, target: user.id, data: { email: user.email, role: user.role, invitation: row.id } });
      return { email: user.email };
    });
  } catch (error) {
    // The address gained a sign-in elsewhere after the invitation was sent, or a racing acceptance won.
    if (error instanceof EmailTakenError || isUniqueViolation(error)) throw new InvitationInvalidError();
    throw error;
  }
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}

export async function pendingInvitations(db: Db, accountId: string) {
  return db.invitation.findMany({
    where: { accountId, ...pending() },
    orderBy: { createdAt: "desc" },
    select: { id: true, email: true, role: true, createdAt: true, expiresAt: true },
  });
}

/** Withdraws a pending invitation (its link stops working); false when there is none in the account. */
export async function revokeInvitation(db: Db, accountId: string, invitationId: string): Promise<boolean> {
  const { count } = await db.invitation.deleteMany({ where: { id: invitationId, accountId, acceptedAt: null } });
  return count === 1;
}
