import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import { recordAudit } from "./audit";
import { issueApiKey } from "./api-keys";
import { DEFAULT_PLANS, ensureDefaultPlans } from "./plans";
import { createUser, MIN_PASSWORD_LENGTH } from "./users";

/**
 * The first run of an installation: while no user exists, one form creates the operator (admin), the
 * first clinic account with its plan and its API key, and that clinic's owner. Once, never again:
 * the check that no user exists and the writes run in one transaction under an advisory lock, so two
 * setups racing each other cannot both pass it.
 */

const FIRST_RUN_LOCK = 0x5e7c;

const password = z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(200);
const email = z.email("must be an email address").transform((e) => e.toLowerCase());

export const firstRunSchema = z
  .object({
    operatorEmail: email,
    operatorPassword: password,
    accountName: z.string().trim().min(1, "is required").max(200),
    plan: z.enum(DEFAULT_PLANS.map((p) => p.name) as [string, ...string[]], { error: `must be one of ${DEFAULT_PLANS.map((p) => p.name).join(", ")}` }),
    ownerEmail: email,
    ownerPassword: password,
  })
  .refine((input) => input.operatorEmail !== input.ownerEmail, { message: "the owner needs an e-mail of their own", path: ["ownerEmail"] });

export type FirstRunInput = z.infer<typeof firstRunSchema>;

export class FirstRunClosedError extends Error {
  constructor() {
    super("this installation is already set up: sign in instead");
  }
}

/** True while no user exists: the only time /setup is open. */
export async function needsFirstRun(db: Db): Promise<boolean> {
  return (await db.user.findFirst({ select: { id: true } })) === null;
}

export async function completeFirstRun(db: Db, input: FirstRunInput): Promise<{ accountId: string; apiKey: string }> {
  await ensureDefaultPlans(db);
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${FIRST_RUN_LOCK}::int, 0)`;
    if ((await tx.user.findFirst({ select: { id: true } })) !== null) throw new FirstRunClosedError();
    const plan = await tx.plan.findUniqueOrThrow({ where: { name: input.plan } });
    const operator = await createUser(tx, { email: input.operatorEmail, password: input.operatorPassword, role: "admin", accountId: null });
    const account = await tx.account.create({ data: { name: input.accountName, planId: plan.id } });
    const owner = await createUser(tx, { email: input.ownerEmail, password: input.ownerPassword, role: "owner", accountId: account.id });
    const { apiKey } = await issueApiKey(tx, account.id);
    const actor = { kind: "user", userId: operator.id, email: operator.email } as const;
    await recordAudit(tx, actor, { action: "setup.complete", accountId: account.id, data: { account: input.accountName, plan: input.plan, owner: owner.email } });
    return { accountId: account.id, apiKey };
  });
}
