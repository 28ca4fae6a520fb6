import { afterEach, describe, expect, it, vi } from "vitest";
import { createUsageBuffer, type ApiCallRecord, type UsageRow } from "./metering";

const call = (status: number, latencyMs = 1, apiKeyId: string | null = "k"): ApiCallRecord => ({
  accountId: "a",
  apiKeyId,
  method: "GET",
  route: "GET /v2/pets/{petId}",
  status,
  latencyMs,
});

describe("usage metering buffer", () => {
  afterEach(() => vi.useRealTimers());

  it("counts calls per key, route, status and second, and writes the groups once the interval after the first call ends", async () => {
    vi.useFakeTimers({ now: new Date("2026-11-23T10:00:00.700Z") });
    const batches: UsageRow[][] = [];
    const buffer = createUsageBuffer(async (rows) => void batches.push(rows), { maxGroups: 100, flushMs: 1000 });
    buffer.add(call(200, 3));
    buffer.add(call(200, 7));
    buffer.add(call(404, 2));
    buffer.add(call(200, 5, "other key"));
    vi.advanceTimersByTime(400); // 10:00:01.100: a new second, a new group for the same call
    buffer.add(call(200, 4));
    expect(buffer.pending()).toBe(4);
    vi.advanceTimersByTime(599);
    expect(batches).toEqual([]);
    vi.advanceTimersByTime(1);
    await vi.runAllTimersAsync();
    expect(batches).toHaveLength(1);
    const rows = batches[0].map((r) => ({ key: r.apiKeyId, status: r.status, second: new Date(r.second).toISOString(), calls: r.calls, sum: r.latencyMsSum, max: r.latencyMsMax }));
    expect(rows).toEqual([
      { key: "k", status: 200, second: "2026-11-23T10:00:00.000Z", calls: 2, sum: 10, max: 7 },
      { key: "k", status: 404, second: "2026-11-23T10:00:00.000Z", calls: 1, sum: 2, max: 2 },
      { key: "other key", status: 200, second: "2026-11-23T10:00:00.000Z", calls: 1, sum: 5, max: 5 },
      { key: "k", status: 200, second: "2026-11-23T10:00:01.000Z", calls: 1, sum: 4, max: 4 },
    ]);
    expect(buffer.pending()).toBe(0);
  });

  it("writes at once when it holds its most groups, without waiting for the interval", () => {
    vi.useFakeTimers();
    const batches: UsageRow[][] = [];
    const buffer = createUsageBuffer(async (rows) => void batches.push(rows), { maxGroups: 3, flushMs: 1000 });
    for (const status of [200, 200, 201, 200, 202, 203]) buffer.add(call(status));
    expect(batches.map((b) => b.map((r) => [r.status, r.calls]))).toEqual([
      [
        [200, 3],
        [201, 1],
        [202, 1],
      ],
    ]);
    expect(buffer.pending()).toBe(1);
  });

  it("flush() writes what is pending and waits for writes under way (the shutdown path)", async () => {
    const releases: (() => void)[] = [];
    const written: number[] = [];
    const buffer = createUsageBuffer(
      async (rows) => {
        await new Promise<void>((r) => releases.push(r));
        written.push(...rows.map((r) => r.status));
      },
      { maxGroups: 2, flushMs: 60_000 },
    );
    buffer.add(call(200));
    buffer.add(call(201)); // two groups: a write starts and waits
    buffer.add(call(202));
    const flushed = buffer.flush(); // writes [202] and waits for both writes
    let done = false;
    void flushed.then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    expect(releases).toHaveLength(2);
    releases[1]();
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false); // the first batch is still being written
    releases[0]();
    await flushed;
    expect(written.sort()).toEqual([200, 201, 202]);
    expect(buffer.pending()).toBe(0);
  });

  it("logs a failed write and never throws to the caller", async () => {
    const errors = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const buffer = createUsageBuffer(() => Promise.reject(new Error("database gone")), { maxGroups: 10, flushMs: 1000 });
    buffer.add(call(200));
    await expect(buffer.flush()).resolves.toBeUndefined();
    expect(errors.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining('"event":"api-usage-record-failed"')]);
    errors.mockRestore();
  });
});
