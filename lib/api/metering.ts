import type { Db } from "@/lib/db/connect";
import { logError } from "@/lib/log";

export interface ApiCallRecord {
  accountId: string | null;
  apiKeyId: string | null;
  method: string;
  /** The route template, so usage groups by endpoint rather than by pet id. */
  route: string;
  status: number;
  latencyMs: number;
}

/** Records one call. Never fails the request: a lost usage row is logged, not answered with 500. */
export async function recordApiCall(db: Db, call: ApiCallRecord): Promise<void> {
  try {
    await db.apiCall.create({ data: call });
  } catch (error) {
    logError("api-call-record-failed", error, { route: call.route });
  }
}

export async function summariseUsage(db: Db, accountId: string) {
  const rows = await db.apiCall.groupBy({
    by: ["route", "status"],
    where: { accountId },
    _count: { _all: true },
    orderBy: [{ route: "asc" }, { status: "asc" }],
  });
  return rows.map((r) => ({ route: r.route, status: r.status, calls: r._count._all }));
}
