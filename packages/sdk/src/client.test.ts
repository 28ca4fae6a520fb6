import { describe, expect, it } from "vitest";
import { JobWaitTimeoutError, RhinariumApiError, RhinariumClient } from "./index";

type FetchFn = (request: Request) => Promise<Response>;

function fakeFetch(responses: (() => Response)[]) {
  const calls: Request[] = [];
  const fetchFn: FetchFn = async (request) => {
    calls.push(request);
    const next = responses.shift();
    if (!next) throw new Error("no more responses");
    return next();
  };
  return { fetchFn, calls };
}

const ok = (data: unknown, status = 200) => () => Response.json({ success: true, data }, { status });
const err = (status: number, code: string) => () => Response.json({ errors: [{ code }] }, { status });

function client(fetchFn: FetchFn, extra: Partial<ConstructorParameters<typeof RhinariumClient>[0]> = {}) {
  return new RhinariumClient({ baseUrl: "http://api.test/", apiKey: "k", fetch: fetchFn, initialBackoffMs: 1, maxBackoffMs: 4, pollIntervalMs: 1, ...extra });
}

describe("RhinariumClient", () => {
  it("sends the key and unwraps the envelope", async () => {
    const { fetchFn, calls } = fakeFetch([ok({ id: "p1" }, 201)]);
    expect(await client(fetchFn).createPet({ species: "DOG" })).toEqual({ id: "p1" });
    expect(calls[0].url).toBe("http://api.test/v2/pets");
    expect(calls[0].headers.get("x-service-api-key")).toBe("k");
    expect(await calls[0].json()).toEqual({ species: "DOG" });
  });

  it("sends one Idempotency-Key over all retries of a create, and another for the next create", async () => {
    const { fetchFn, calls } = fakeFetch([err(503, "SERVICEB2B10503"), ok({ id: "p1" }, 201), ok({ id: "p2" }, 201), ok([])]);
    const c = client(fetchFn);
    await c.createPet({ species: "DOG" });
    await c.createPet({ species: "DOG" });
    await c.listPets();
    const keys = calls.map((call) => call.headers.get("idempotency-key") ?? undefined);
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
    const c = new RhinariumClient({ baseUrl: "http://x", apiKey: "k" }) as unknown as { settings: { pollIntervalMs: number; maxWaitMs: number; maxPolls: number } };
    expect(c.settings.pollIntervalMs).toBeGreaterThanOrEqual(2000);
    expect(c.settings.pollIntervalMs).toBeLessThanOrEqual(3000);
    expect(c.settings.maxWaitMs).toBe(60_000);
    expect(c.settings.maxPolls).toBeGreaterThanOrEqual(20);
    expect(c.settings.maxPolls).toBeLessThanOrEqual(30);
  });

  it("uploads an image as multipart with the session in the query, the boundary set by fetch", async () => {
    const { fetchFn, calls } = fakeFetch([ok({ id: "f1" }, 201)]);
    expect(await client(fetchFn).uploadFingerprint("s 1", new Uint8Array([0xff, 0xd8, 0xff]))).toEqual({ id: "f1" });
    expect(calls[0].url).toBe("http://api.test/v2/fingerprints:upload?sessionId=s%201");
    expect(calls[0].headers.get("content-type")).toMatch(/^multipart\/form-data; boundary=/);
    expect(calls[0].headers.get("idempotency-key")).toBeNull();
    const file = (await calls[0].formData()).get("file") as File;
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(new Uint8Array([0xff, 0xd8, 0xff]));
  });

  it("waits for any kind of job by name, on that kind's path", async () => {
    const { fetchFn, calls } = fakeFetch([ok({ status: "PENDING" }), ok({ status: "SUCCESS", candidates: [] })]);
    expect(await client(fetchFn).waitForJob("identification", "j/1")).toEqual({ status: "SUCCESS", candidates: [] });
    expect(calls.map((c) => c.url)).toEqual(["http://api.test/v2/identification-jobs/j%2F1", "http://api.test/v2/identification-jobs/j%2F1"]);
  });
});
