import type { Db } from "@/lib/db/connect";

/**
 * The plans every installation starts with. demo is the free default: small pet limit (10005 beyond
 * it), identification included. Operators change or add plans with `ops plan:upsert`.
 */
export const DEFAULT_PLANS = [
  { name: "demo", petLimit: 5, identification: true },
  { name: "basic", petLimit: null, identification: false },
  { name: "standard", petLimit: null, identification: true },
] as const;

/** Creates the default plans that are missing; never overwrites an operator's changes. */
export async function ensureDefaultPlans(db: Db): Promise<void> {
  await db.plan.createMany({ data: DEFAULT_PLANS.map((p) => ({ ...p })), skipDuplicates: true });
}

export async function upsertPlan(db: Db, plan: { name: string; petLimit: number | null; identification: boolean }) {
  return db.plan.upsert({
    where: { name: plan.name },
    create: plan,
    update: { petLimit: plan.petLimit, identification: plan.identification },
  });
}
