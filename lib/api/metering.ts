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

/** A buffer flushes when it holds this many rows, or this long after its first row, whichever comes first. */
const METERING_FLUSH_ROWS = 200;
const METERING_FLUSH_MS = 100;

export interface ApiCallBuffer {
  add(call: ApiCallRecord): void;
  /** Writes what is buffered now (and waits for writes already under way). Never throws. */
  flush(): Promise<void>;
  pending(): number;
}

/**
 * Usage rows are not answers a client waits for, so they are written in batches: one multi-row
 * INSERT per 100 ms (or 200 rows) instead of one INSERT and commit per request, which cost a pool
 * connection and a commit on every call. A crash (SIGKILL, power) loses at most the rows of the
 * last 100 ms; SIGTERM flushes (lib/server/start.ts). A failed write is logged, never answered.
 */
export function createApiCallBuffer(
  write: (rows: ApiCallRecord[]) => Promise<unknown>,
  options: { maxRows: number; flushMs: number } = { maxRows: METERING_FLUSH_ROWS, flushMs: METERING_FLUSH_MS },
): ApiCallBuffer {
  let rows: (ApiCallRecord & { createdAt: Date })[] = [];
  let timer: NodeJS.Timeout | undefined;
  const writing = new Set<Promise<void>>();

  function writeNow(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (rows.length === 0) return Promise.resolve();
    const batch = rows;
    rows = [];
    const done = write(batch)
      .then(() => undefined)
      .catch((error) => logError("api-call-record-failed", error, { rows: batch.length }))
      .finally(() => writing.delete(done));
    writing.add(done);
    return done;
  }

  return {
    add(call) {
      // The call's own time, not the flush's: usage by day must not shift across midnight.
      rows.push({ ...call, createdAt: new Date() });
      if (rows.length >= options.maxRows) void writeNow();
      // unref: a pending flush alone never keeps a process (a CLI, a test) alive.
      else if (!timer) timer = setTimeout(() => void writeNow(), options.flushMs).unref();
    },
    async flush() {
      void writeNow();
      await Promise.all([...writing]);
    },
    pending: () => rows.length,
  };
}

// One buffer per database client in this process, kept on globalThis like the client itself.
const state = globalThis as unknown as { __rhinariumMeteringBuffers?: Map<Db, ApiCallBuffer> };
const buffers = (state.__rhinariumMeteringBuffers ??= new Map());

/** Records one call (buffered, see createApiCallBuffer). Never fails the request. */
export function recordApiCall(db: Db, call: ApiCallRecord): void {
  let buffer = buffers.get(db);
  if (!buffer) {
    buffer = createApiCallBuffer((rows) => db.apiCall.createMany({ data: rows }));
    buffers.set(db, buffer);
  }
  buffer.add(call);
}

/** Writes every buffered usage row of this process: before the database closes, and before usage is read. */
export async function flushApiCalls(): Promise<void> {
  await Promise.all([...buffers.values()].map((b) => b.flush()));
}

export async function summariseUsage(db: Db, accountId: string) {
  await flushApiCalls();
  const rows = await db.apiCall.groupBy({
    by: ["route", "status"],
    where: { accountId },
    _count: { _all: true },
    orderBy: [{ route: "asc" }, { status: "asc" }],
  });
  return rows.map((r) => ({ route: r.route, status: r.status, calls: r._count._all }));
}
