import { describe, expect, it } from "vitest";
import { JobWaitTimeoutError, RhinariumApiError, RhinariumClient } from "./index";

function fakeFetch(responses: (() => Response)[]) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const fetchFn = (async (url: string, init?: RequestInit) => {
    calls.push({ url, init });
    const next = responses.shift();
    if (!next) throw new Error("no more responses");
    return next();
  }) as typeof fetch;
  return { fetchFn, calls };
}

const ok = (data: unknown, status = 200) => () => Response.json({ success: true, data }, { status });
const err = (status: number, code: string) => () => Response.json({ errors: [{ code }] }, { status });

function client(fetchFn: typeof fetch, extra: Partial<ConstructorParameters<typeof RhinariumClient>[0]> = {}) {
  return new RhinariumClient({ baseUrl: "http://api.test/", apiKey: "k", fetch: fetchFn, initialBackoffMs: 1, maxBackoffMs: 4, pollIntervalMs: 1, ...extra });
}

describe("RhinariumClient", () => {
  it("sends the key and unwraps the envelope", async () => {
    const { fetchFn, calls } = fakeFetch([ok({ id: "p1" }, 201)]);
    expect(await client(fetchFn).createPet({ species: "DOG" })).toEqual({ id: "p1" });
    expect(calls[0].url).toBe("http://api.test/v2/pets");
    expect((calls[0].init!.headers as Record<string, string>)["x-service-api-key"]).toBe("k");
  });

  it("sends one Idempotency-Key over all retries of a create, and another for the next create", async () => {
    const { fetchFn, calls } = fakeFetch([err(503, "SERVICEB2B10503"), ok({ id: "p1" }, 201), ok({ id: "p2" }, 201), ok([])]);
    const c = client(fetchFn);
    await c.createPet({ species: "DOG" });
    await c.createPet({ species: "DOG" });
    await c.listPets();
    const keys = calls.map((call) => (call.init!.headers as Record<string, string>)["idempotency-key"]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(keys[3]).toBeUndefined();
  });

  it("retries 5xx and network failures with backoff, then succeeds", async () => {
    const { fetchFn, calls } = fakeFetch([
      err(500, "SERVICEB2B10500"),
      () => {
        throw new TypeError("fetch failed");
      },
      ok([]),
    ]);
    expect(await client(fetchFn).listPets()).toEqual([]);
    expect(calls).toHaveLength(3);
  });

  it("gives up after the configured retries with the last 5xx as an error", async () => {
    const { fetchFn, calls } = fakeFetch([err(500, "A"), err(502, "B"), err(500, "SERVICEB2B10500")]);
    await expect(client(fetchFn, { retries: 2 }).listPets()).rejects.toMatchObject({ status: 500, code: "SERVICEB2B10500" });
    expect(calls).toHaveLength(3);
  });

  it("waits the Retry-After of a 429, then retries", async () => {
    const limited = () => Response.json({ errors: [{ code: "SERVICEB2B10429" }] }, { status: 429, headers: { "retry-after": "1" } });
    const { fetchFn, calls } = fakeFetch([limited, ok([])]);
    const started = performance.now();
    expect(await client(fetchFn).listPets()).toEqual([]);
    expect(calls).toHaveLength(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
  });

  it("does not retry 4xx and exposes the contract's error code", async () => {
    const { fetchFn, calls } = fakeFetch([err(404, "SERVICEB2B20000")]);
    const error = await client(fetchFn).getPet("x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RhinariumApiError);
    expect((error as RhinariumApiError).code).toBe("SERVICEB2B20000");
    expect(calls).toHaveLength(1);
  });

  it("polls a job until it leaves PENDING", async () => {
    const { fetchFn } = fakeFetch([ok({ status: "PENDING" }), ok({ status: "PENDING" }), ok({ status: "SUCCESS", isVerified: true, score: 91 })]);
    expect(await client(fetchFn).waitForVerification("j")).toEqual({ status: "SUCCESS", isVerified: true, score: 91 });
  });

  it("bounds the wait by the number of polls", async () => {
    const { fetchFn, calls } = fakeFetch(Array.from({ length: 10 }, () => ok({ status: "PENDING" })));
    await expect(client(fetchFn, { maxPolls: 4 }).waitForFingerprintAddition("j")).rejects.toBeInstanceOf(JobWaitTimeoutError);
    expect(calls).toHaveLength(4);
  });

  it("defaults to the contract's recommended polling (2–3 s, at most 60 s and 20–30 polls)", () => {
    const c = new RhinariumClient({ baseUrl: "http://x", apiKey: "k" }) as unknown as { opts: { pollIntervalMs: number; maxWaitMs: number; maxPolls: number } };
    expect(c.opts.pollIntervalMs).toBeGreaterThanOrEqual(2000);
    expect(c.opts.pollIntervalMs).toBeLessThanOrEqual(3000);
    expect(c.opts.maxWaitMs).toBe(60_000);
    expect(c.opts.maxPolls).toBeGreaterThanOrEqual(20);
    expect(c.opts.maxPolls).toBeLessThanOrEqual(30);
  });
});
