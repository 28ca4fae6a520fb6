import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import { recordAudit } from "@/lib/accounts/audit";
import { DashboardError, operatorAction } from "./action-client";

// The operator's (admin) view: every account, with suspension (the API answers 10010 while suspended).

export async function listAccounts(db: Db) {
  const rows = await db.account.findMany({
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

export const setAccountSuspendedAction = operatorAction({
  capability: "accounts:operate",
  input: z.object({ accountId: z.string().min(1).max(100), suspended: z.boolean() }),
  async run(ctx, input) {
    const { count } = await ctx.db.account.updateMany({ where: { id: input.accountId }, data: { suspended: input.suspended } });
    if (count === 0) throw new DashboardError("This account does not exist.");
    await recordAudit(ctx.db, { kind: "user", userId: ctx.user.id, email: ctx.user.email }, {
      action: input.suspended ? "account.suspend" : "account.reinstate",
      accountId: input.accountId,
    });
    return { accountId: input.accountId, suspended: input.suspended };
  },
});
