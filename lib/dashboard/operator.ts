import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import type { Prisma } from "@/lib/generated/prisma/client";
import { issueApiKey } from "@/lib/accounts/api-keys";
import { recordAudit } from "@/lib/accounts/audit";
import { createUser, EmailTakenError, MIN_PASSWORD_LENGTH, USER_ROLES } from "@/lib/accounts/users";
import { DashboardError, operatorAction, type OperatorActionContext } from "./action-client";

// The operator's (admin) console: every account, searchable; new accounts (with their first API key,
// shown once) and users of any account (or operators); plans; suspension (the API answers 10010 while
// suspended). What the ops CLI does for these, from the browser.

export const ACCOUNT_SEARCH_MAX = 100;

/** Accounts whose name or id contains `search` (case-insensitive), or whose user's e-mail does; all when empty. */
export async function listAccounts(db: Db, search = "") {
  const q = search.trim().slice(0, ACCOUNT_SEARCH_MAX);
  const where: Prisma.AccountWhereInput = q
    ? {
        OR: [
          { name: { contains: q, mode: "insensitive" } },
          { id: { contains: q } },
          { users: { some: { email: { contains: q.toLowerCase() } } } },
        ],
      }
    : {};
  const rows = await db.account.findMany({
    where,
    orderBy: { createdAt: "asc" },
    include: { plan: { select: { name: true } }, _count: { select: { pets: true, users: true, jobs: true } } },
  });
  return rows.map((a) => ({
    id: a.id,
    name: a.name,
    plan: a.plan?.name ?? null,
    suspended: a.suspended,
    pets: a._count.pets,
    users: a._count.users,
    jobs: a._count.jobs,
    createdAt: a.createdAt.toISOString(),
  }));
}

export async function listPlans(db: Db) {
  return db.plan.findMany({ orderBy: { name: "asc" }, select: { name: true, petLimit: true, identification: true } });
}

function audit(ctx: OperatorActionContext, action: string, accountId: string | null, target: string | null, data: Prisma.InputJsonValue = {}) {
  return recordAudit(ctx.db, { kind: "user", userId: ctx.user.id, email: ctx.user.email }, { action, accountId, target, data });
}

async function planIdOrNull(db: Db, name: string): Promise<string | null> {
  if (name === "none") return null;
  const plan = await db.plan.findUnique({ where: { name }, select: { id: true } });
  if (!plan) throw new DashboardError(`There is no plan ${name}.`);
  return plan.id;
}

const planName = z.string().trim().min(1, "choose a plan").max(100);

export const setAccountSuspendedAction = operatorAction({
  capability: "accounts:operate",
  input: z.object({ accountId: z.string().min(1).max(100), suspended: z.boolean() }),
  async run(ctx, input) {
    const { count } = await ctx.db.account.updateMany({ where: { id: input.accountId }, data: { suspended: input.suspended } });
    if (count === 0) throw new DashboardError("This account does not exist.");
    await audit(ctx, input.suspended ? "account.suspend" : "account.reinstate", input.accountId, input.accountId);
    return { accountId: input.accountId, suspended: input.suspended };
  },
});

/** A new clinic account on a plan, with its first API key (returned once, never stored). */
export const createAccountAction = operatorAction({
  capability: "accounts:operate",
  input: z.object({ name: z.string().trim().min(1, "enter the clinic's name").max(200, "at most 200 characters"), plan: planName }),
  async run(ctx, input) {
    const planId = await planIdOrNull(ctx.db, input.plan);
    const account = await ctx.db.account.create({ data: { name: input.name, planId } });
    const { apiKey } = await issueApiKey(ctx.db, account.id, { name: "first key" });
    await audit(ctx, "account.create", account.id, account.id, { name: input.name, plan: input.plan });
    return { accountId: account.id, apiKey };
  },
});

/** Moves an account to another plan (or none): its pet limit and identification follow at the next API call. */
export const setAccountPlanAction = operatorAction({
  capability: "accounts:operate",
  input: z.object({ accountId: z.string().min(1).max(100), plan: planName }),
  async run(ctx, input) {
    const planId = await planIdOrNull(ctx.db, input.plan);
    const { count } = await ctx.db.account.updateMany({ where: { id: input.accountId }, data: { planId } });
    if (count === 0) throw new DashboardError("This account does not exist.");
    await audit(ctx, "account.plan", input.accountId, input.accountId, { plan: input.plan });
    return { accountId: input.accountId, plan: input.plan };
  },
});

/** A sign-in user for an account (staff, support, manager, owner), or an operator (admin, no account). */
export const createUserAction = operatorAction({
  capability: "accounts:operate",
  input: z
    .object({
      email: z.email("must be an email address"),
      password: z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(200),
      role: z.enum(USER_ROLES, { error: `must be one of ${USER_ROLES.join(", ")}` }),
      accountId: z.string().max(100).optional().default(""),
    })
    .refine((u) => (u.role === "admin") === (u.accountId === ""), {
      message: "an operator (admin) has no account; every other role needs one",
      path: ["accountId"],
    }),
  async run(ctx, input) {
    const accountId = input.accountId === "" ? null : input.accountId;
    if (accountId && !(await ctx.db.account.findUnique({ where: { id: accountId }, select: { id: true } }))) {
      throw new DashboardError("This account does not exist.");
    }
    const user = await createUser(ctx.db, { email: input.email.toLowerCase(), password: input.password, role: input.role, accountId }).catch((error) => {
      throw error instanceof EmailTakenError ? new DashboardError("A user with this e-mail already exists.") : error;
    });
    await audit(ctx, "user.create", accountId, user.id, { email: user.email, role: user.role });
    return { userId: user.id, email: user.email };
  },
});
