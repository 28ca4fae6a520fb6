import { afterEach, describe, expect, it, vi } from "vitest";
import { createApiCallBuffer, type ApiCallRecord } from "./metering";

const call = (status: number): ApiCallRecord => ({ accountId: "a", apiKeyId: "k", method: "GET", route: "GET /v2/pets/{petId}", status, latencyMs: 1 });

describe("usage metering buffer", () => {
  afterEach(() => vi.useRealTimers());

  it("writes one batch when the interval after its first row ends, with each call's own time", async () => {
    vi.useFakeTimers({ now: new Date("2026-11-23T10:00:00Z") });
    const batches: ApiCallRecord[][] = [];
    const buffer = createApiCallBuffer(async (rows) => void batches.push(rows), { maxRows: 100, flushMs: 100 });
    buffer.add(call(200));
    vi.advanceTimersByTime(60);
    buffer.add(call(404));
    expect(batches).toEqual([]);
    vi.advanceTimersByTime(40);
    await vi.runAllTimersAsync();
    expect(batches.map((b) => b.map((r) => r.status))).toEqual([[200, 404]]);
    expect(batches[0].map((r) => (r as ApiCallRecord & { createdAt: Date }).createdAt.toISOString())).toEqual([
      "2026-11-23T10:00:00.000Z",
      "2026-11-23T10:00:00.060Z",
    ]);
    expect(buffer.pending()).toBe(0);
  });

  it("writes at once when the buffer is full, without waiting for the interval", () => {
    vi.useFakeTimers();
    const batches: ApiCallRecord[][] = [];
    const buffer = createApiCallBuffer(async (rows) => void batches.push(rows), { maxRows: 3, flushMs: 100 });
    for (const status of [200, 201, 202, 203]) buffer.add(call(status));
    expect(batches.map((b) => b.map((r) => r.status))).toEqual([[200, 201, 202]]);
    expect(buffer.pending()).toBe(1);
  });

  it("flush() writes what is pending and waits for writes under way (the shutdown path)", async () => {
    const releases: (() => void)[] = [];
    const written: number[] = [];
    const buffer = createApiCallBuffer(
      async (rows) => {
        await new Promise<void>((r) => releases.push(r));
        written.push(...rows.map((r) => r.status));
      },
      { maxRows: 2, flushMs: 60_000 },
    );
    buffer.add(call(200));
    buffer.add(call(201)); // full: a write starts and waits
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
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const buffer = createApiCallBuffer(() => Promise.reject(new Error("database gone")), { maxRows: 10, flushMs: 100 });
    buffer.add(call(200));
    await expect(buffer.flush()).resolves.toBeUndefined();
    expect(errors.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining('"event":"api-call-record-failed"')]);
    errors.mockRestore();
  });
});
