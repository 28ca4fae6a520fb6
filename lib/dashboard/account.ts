import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import { deactivateApiKey, isExpired, issueApiKey, KeyLimitError, MAX_ACTIVE_KEYS_PER_ACCOUNT, MAX_KEY_NAME_LENGTH, reissueApiKey } from "@/lib/accounts/api-keys";
import { recordAudit } from "@/lib/accounts/audit";
import { InvitationNotSentError, InvitationRefusedError, inviteMember, pendingInvitations, revokeInvitation } from "@/lib/accounts/invitations";
import { MIN_PASSWORD_LENGTH, setPassword, unlockUser, USER_ROLES } from "@/lib/accounts/users";
import { accountAction, DashboardError, type AccountActionContext } from "./action-client";
import { MAX_PET_FIELDS, PET_FIELD_KEY } from "./pet-fields";

// The owner's settings: API keys, plan and pet-limit usage, team members and roles, search pools.

export async function getAccountSettings(db: Db, accountId: string) {
  const invitations = await pendingInvitations(db, accountId);
  const account = await db.account.findUniqueOrThrow({
    where: { id: accountId },
    include: {
      plan: true,
      apiKeys: { orderBy: { createdAt: "desc" }, select: { id: true, prefix: true, name: true, active: true, expiresAt: true, lastUsedAt: true, createdAt: true } },
      users: { orderBy: { email: "asc" }, select: { id: true, email: true, role: true, createdAt: true, lockedUntil: true } },
      pools: { orderBy: { name: "asc" }, select: { id: true, name: true, _count: { select: { pets: true } } } },
      _count: { select: { pets: true } },
    },
  });
  return {
    id: account.id,
    name: account.name,
    suspended: account.suspended,
    plan: account.plan ? { name: account.plan.name, petLimit: account.plan.petLimit, identification: account.plan.identification } : null,
    pets: account._count.pets,
    searchPoolName: account.searchPoolName,
    petFields: account.petFields,
    keys: account.apiKeys.map((k) => ({
      ...k,
      expired: isExpired(k),
      expiresAt: k.expiresAt?.toISOString() ?? null,
      lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
      createdAt: k.createdAt.toISOString(),
    })),
    users: account.users.map((u) => ({
      ...u,
      createdAt: u.createdAt.toISOString(),
      lockedUntil: u.lockedUntil && u.lockedUntil.getTime() > Date.now() ? u.lockedUntil.toISOString() : null,
    })),
    invitations: invitations.map((i) => ({ ...i, createdAt: i.createdAt.toISOString(), expiresAt: i.expiresAt.toISOString() })),
    pools: account.pools.map((p) => ({ name: p.name, pets: p._count.pets })),
  };
}

/** The metadata keys a pet's form shows as fields, in order. */
export async function getPetFields(db: Db, accountId: string): Promise<string[]> {
  const account = await db.account.findUniqueOrThrow({ where: { id: accountId }, select: { petFields: true } });
  return account.petFields;
}

function audit(ctx: AccountActionContext, action: string, target: string | null, data: Record<string, string | number | null> = {}) {
  return recordAudit(ctx.db, { kind: "user", userId: ctx.user.id, email: ctx.user.email }, { action, accountId: ctx.accountId, target, data });
}

/** Expiry choices offered for a new key, in days; absent = never. */
export const KEY_EXPIRY_DAYS = [30, 90, 365] as const;

const newKeyInput = z.object({
  name: z.string().trim().max(MAX_KEY_NAME_LENGTH, `at most ${MAX_KEY_NAME_LENGTH} characters`).optional().default(""),
  expiresInDays: z.coerce
    .number()
    .int()
    .refine((d) => (KEY_EXPIRY_DAYS as readonly number[]).includes(d), `must be one of ${KEY_EXPIRY_DAYS.join(", ")} days, or never`)
    .nullable()
    .optional()
    .default(null),
});

function keyOptions(input: z.infer<typeof newKeyInput>) {
  return { name: input.name, expiresAt: input.expiresInDays === null ? null : new Date(Date.now() + input.expiresInDays * 86_400_000) };
}

/** A new key beside the existing ones, with a name and an optional expiry; the key itself is returned once and never stored. */
export const issueKeyAction = accountAction({
  capability: "account:manage",
  input: newKeyInput,
  async run(ctx, input) {
    const options = keyOptions(input);
    const { apiKey, keyId } = await issueApiKey(ctx.db, ctx.accountId, options).catch((error) => {
      throw error instanceof KeyLimitError ? new DashboardError(`At most ${MAX_ACTIVE_KEYS_PER_ACCOUNT} active keys: deactivate one first.`) : error;
    });
    await audit(ctx, "key.issue", keyId, { name: options.name, expiresAt: options.expiresAt?.toISOString() ?? null });
    return { apiKey };
  },
});

/** Every active key stops working; one new key, shown once. */
export const reissueKeyAction = accountAction({
  capability: "account:manage",
  input: newKeyInput,
  async run(ctx, input) {
    const options = keyOptions(input);
    const { apiKey, keyId } = await reissueApiKey(ctx.db, ctx.accountId, options);
    await audit(ctx, "key.reissue", keyId, { name: options.name, expiresAt: options.expiresAt?.toISOString() ?? null });
    return { apiKey };
  },
});

export const deactivateKeyAction = accountAction({
  capability: "account:manage",
  input: z.object({ keyId: z.string().min(1).max(100) }),
  async run(ctx, input) {
    if (!(await deactivateApiKey(ctx.db, ctx.accountId, input.keyId))) throw new DashboardError("This key does not exist or is already inactive.");
    await audit(ctx, "key.deactivate", input.keyId);
    return { keyId: input.keyId };
  },
});

const ACCOUNT_ROLES = USER_ROLES.filter((r) => r !== "admin");

export const inviteTeamMemberAction = accountAction({
  capability: "account:manage",
  input: z.object({
    email: z.email("must be an email address").max(254),
    role: z.enum(ACCOUNT_ROLES, { error: `must be one of ${ACCOUNT_ROLES.join(", ")}` }),
  }),
  async run(ctx, input) {
    const invitation = { accountId: ctx.accountId, email: input.email, role: input.role, inviter: { id: ctx.user.id, email: ctx.user.email } };
    return inviteMember(ctx.db, invitation, await ctx.origin()).catch((error) => {
      throw error instanceof InvitationRefusedError || error instanceof InvitationNotSentError ? new DashboardError(error.message) : error;
    });
  },
});

export const revokeInvitationAction = accountAction({
  capability: "account:manage",
  input: z.object({ invitationId: z.string().min(1).max(100) }),
  async run(ctx, input) {
    if (!(await revokeInvitation(ctx.db, ctx.accountId, input.invitationId))) throw new DashboardError("This invitation does not exist or was already accepted.");
    await audit(ctx, "user.invite-revoke", input.invitationId);
    return { invitationId: input.invitationId };
  },
});

export const changeRoleAction = accountAction({
  capability: "account:manage",
  input: z.object({ userId: z.string().min(1).max(100), role: z.enum(ACCOUNT_ROLES) }),
  async run(ctx, input) {
    if (input.userId === ctx.user.id) throw new DashboardError("You cannot change your own role.");
    const { count } = await ctx.db.user.updateMany({ where: { id: input.userId, accountId: ctx.accountId }, data: { role: input.role } });
    if (count === 0) throw new DashboardError("This user does not exist.");
    await audit(ctx, "user.role", input.userId, { role: input.role });
    return { userId: input.userId };
  },
});

export const removeTeamMemberAction = accountAction({
  capability: "account:manage",
  input: z.object({ userId: z.string().min(1).max(100) }),
  async run(ctx, input) {
    if (input.userId === ctx.user.id) throw new DashboardError("You cannot remove yourself.");
    const { count } = await ctx.db.user.deleteMany({ where: { id: input.userId, accountId: ctx.accountId } });
    if (count === 0) throw new DashboardError("This user does not exist.");
    await audit(ctx, "user.remove", input.userId);
    return { userId: input.userId };
  },
});

/** The owner sets a member's password (they sign in with it and change it); lifts a lockout, ends their sessions. */
export const resetMemberPasswordAction = accountAction({
  capability: "account:manage",
  input: z.object({
    userId: z.string().min(1).max(100),
    password: z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(200),
  }),
  async run(ctx, input) {
    if (input.userId === ctx.user.id) throw new DashboardError("Change your own password on your account page.");
    if (!(await setPassword(ctx.db, { id: input.userId, accountId: ctx.accountId }, input.password))) throw new DashboardError("This user does not exist.");
    await audit(ctx, "user.password-reset", input.userId);
    return { userId: input.userId };
  },
});

/** Lifts a member's sign-in lockout (5 failures) before its 15 minutes are over. */
export const unlockMemberAction = accountAction({
  capability: "account:manage",
  input: z.object({ userId: z.string().min(1).max(100) }),
  async run(ctx, input) {
    if (!(await unlockUser(ctx.db, { id: input.userId, accountId: ctx.accountId }))) throw new DashboardError("This user does not exist.");
    await audit(ctx, "user.unlock", input.userId);
    return { userId: input.userId };
  },
});

export const selectSearchPoolAction = accountAction({
  capability: "account:manage",
  input: z.object({ pool: z.string().min(1).max(200) }),
  async run(ctx, input) {
    if (input.pool !== "default") {
      const pool = await ctx.db.searchPool.findUnique({ where: { accountId_name: { accountId: ctx.accountId, name: input.pool } } });
      if (!pool) throw new DashboardError("This search pool does not exist.");
    }
    await ctx.db.account.update({ where: { id: ctx.accountId }, data: { searchPoolName: input.pool === "default" ? null : input.pool } });
    await audit(ctx, "pool.assign", ctx.accountId, { pool: input.pool });
    return { pool: input.pool };
  },
});

export const setPetFieldsAction = accountAction({
  capability: "account:manage",
  input: z.object({
    fields: z
      .array(z.string().trim().regex(PET_FIELD_KEY, "a key is a letter, then letters, digits, _ or - (at most 40)"))
      .max(MAX_PET_FIELDS, `at most ${MAX_PET_FIELDS} fields`)
      .refine((keys) => new Set(keys).size === keys.length, "each key once"),
  }),
  async run(ctx, input) {
    await ctx.db.account.update({ where: { id: ctx.accountId }, data: { petFields: input.fields } });
    await audit(ctx, "account.pet-fields", ctx.accountId, { fields: input.fields.join(", ") });
    return { fields: input.fields };
  },
});
