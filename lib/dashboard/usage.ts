import { flushApiCalls } from "@/lib/api/metering";
import type { Db } from "@/lib/db/connect";

// The manager's view: metered API calls, jobs, failure-to-enrol rate, job latency, and the account's
// own verification score distribution (the published evaluation run comes from lib/engine-figures.ts).

export const USAGE_DAYS = 30;
/** The date ranges the usage page offers (days back from today, today included). */
export const USAGE_RANGES = [7, 30, 90] as const;

/** The range asked for in the URL, or the default when it is not one of the offered ones. */
export function usageRange(raw: unknown): number {
  const days = Number(raw);
  return (USAGE_RANGES as readonly number[]).includes(days) ? days : USAGE_DAYS;
}

export interface UsageReport {
  days: string[];
  /** First day of the range (UTC, YYYY-MM-DD): jobs, latency and scores count from it too. */
  since: string;
  /** Calls per day, one series per API key (by its prefix); "no key" for calls without a valid key. */
  callsByDay: Record<string, string | number>[];
  keys: string[];
  jobsByKind: { kind: string; PENDING: number; SUCCESS: number; FAILED: number }[];
  failureToEnrol: { failed: number; finished: number; rate: number | null };
  latency: { kind: string; p50: number | null; p95: number | null; jobs: number }[];
  verificationScores: { from: number; to: number; verified: number; notVerified: number }[];
  verifications: number;
}

function dayKey(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export async function getUsageReport(db: Db, accountId: string, now = new Date(), rangeDays: number = USAGE_DAYS): Promise<UsageReport> {
  const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (rangeDays - 1)));
  const days = Array.from({ length: rangeDays }, (_, i) => dayKey(new Date(since.getTime() + i * 86_400_000)));
  await flushApiCalls(); // this process's last second of counts, so a page shows the calls just made
  const [calls, keys, jobs, latency, verifications] = await Promise.all([
    db.$queryRaw<{ day: Date; apiKeyId: string | null; calls: bigint }[]>`
      SELECT date_trunc('day', second) AS day, "apiKeyId", sum(calls) AS calls
      FROM "ApiUsage" WHERE "accountId" = ${accountId} AND second >= ${since}
      GROUP BY 1, 2`,
    db.apiKey.findMany({ where: { accountId }, select: { id: true, prefix: true, name: true } }),
    db.job.groupBy({ by: ["kind", "status"], where: { accountId, createdAt: { gte: since } }, _count: { _all: true } }),
    db.$queryRaw<{ kind: string; p50: number | null; p95: number | null; jobs: bigint }[]>`
      SELECT kind::text AS kind,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM ("finishedAt" - "createdAt")) * 1000) AS p50,
        percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM ("finishedAt" - "createdAt")) * 1000) AS p95,
        count(*) AS jobs
      FROM "Job" WHERE "accountId" = ${accountId} AND "finishedAt" IS NOT NULL AND "createdAt" >= ${since}
      GROUP BY 1 ORDER BY 1`,
    db.job.findMany({ where: { accountId, kind: "VERIFICATION", status: "SUCCESS", createdAt: { gte: since } }, select: { result: true } }),
  ]);
  const keyName = new Map(keys.map((k) => [k.id, k.name ? `${k.prefix}… (${k.name})` : `${k.prefix}…`]));
  const byDay = new Map(days.map((d) => [d, { day: d } as Record<string, string | number>]));
  const seenKeys = new Set<string>();
  for (const row of calls) {
    const name = row.apiKeyId ? (keyName.get(row.apiKeyId) ?? "removed key") : "no key";
    seenKeys.add(name);
    const entry = byDay.get(dayKey(new Date(row.day)));
    if (entry) entry[name] = Number(entry[name] ?? 0) + Number(row.calls);
  }
  const count = (kind: string, status: string) => jobs.find((j) => j.kind === kind && j.status === status)?._count._all ?? 0;
  const enrolFailed = count("FINGERPRINT_ADDITION", "FAILED");
  const enrolFinished = enrolFailed + count("FINGERPRINT_ADDITION", "SUCCESS");
  const bins = Array.from({ length: 20 }, (_, i) => ({ from: i * 5, to: i * 5 + 5, verified: 0, notVerified: 0 }));
  for (const { result } of verifications) {
    const r = result as { score?: number; isVerified?: boolean } | null;
    if (typeof r?.score !== "number") continue;
    const bin = bins[Math.min(bins.length - 1, Math.floor(r.score / 5))];
    if (r.isVerified) bin.verified++;
    else bin.notVerified++;
  }
  return {
    days,
    since: days[0],
    keys: [...seenKeys].sort(),
    callsByDay: [...byDay.values()],
    jobsByKind: ["FINGERPRINT_ADDITION", "VERIFICATION", "IDENTIFICATION"].map((kind) => ({
      kind,
      PENDING: count(kind, "PENDING"),
      SUCCESS: count(kind, "SUCCESS"),
      FAILED: count(kind, "FAILED"),
    })),
    failureToEnrol: { failed: enrolFailed, finished: enrolFinished, rate: enrolFinished > 0 ? enrolFailed / enrolFinished : null },
    latency: latency.map((l) => ({
      kind: l.kind,
      p50: l.p50 === null ? null : Math.round(Number(l.p50)),
      p95: l.p95 === null ? null : Math.round(Number(l.p95)),
      jobs: Number(l.jobs),
    })),
    verificationScores: bins,
    verifications: verifications.length,
  };
}

