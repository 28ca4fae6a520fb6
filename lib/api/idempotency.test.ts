import { afterAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "@/lib/db/connect";
import { openTestDatabase } from "@/lab/test-support/database";
import { ApiError } from "./errors";
import { jsonAnswer } from "./exchange";
import {
  ABANDONED_AFTER_MS,
  claimIdempotencyKey,
  IDEMPOTENCY_TTL_MS,
  idempotencyKeyOf,
  requestFingerprint,
  settleIdempotencyKey,
  sweepIdempotencyKeys,
} from "./idempotency";

// Idempotency-Key: what a retry with the same key gets, in both database modes. Over HTTP: hardening.test.ts.

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function open(mode: "pglite" | "postgres"): Promise<OpenDatabase> {
  const { open: db, close } = await openTestDatabase(mode, "idempotency");
  cleanups.push(close);
  return db;
}

describe("idempotency keys: the header", () => {
  it("takes printable ASCII of 1 to 255 characters, and no header as no key", () => {
    expect(idempotencyKeyOf(undefined)).toBeUndefined();
    expect(idempotencyKeyOf("3f1c2a9e-5b7d-4c1e-9f00-aa11bb22cc33")).toBe("3f1c2a9e-5b7d-4c1e-9f00-aa11bb22cc33");
    for (const bad of ["", "a b", "x".repeat(256), "caf\u00e9"]) expect(() => idempotencyKeyOf(bad), bad).toThrow(ApiError);
  });

  it("fingerprints the method, target and input", () => {
    const a = requestFingerprint("POST", "/v2/pets", { body: { species: "DOG" } });
    expect(requestFingerprint("POST", "/v2/pets", { body: { species: "DOG" } })).toBe(a);
    expect(requestFingerprint("POST", "/v2/pets", { body: { species: "CAT" } })).not.toBe(a);
    expect(requestFingerprint("POST", "/v2/capture-sessions", { body: { species: "DOG" } })).not.toBe(a);
  });
});

describe.each(["pglite", "postgres"] as const)("idempotency keys (%s)", (mode) => {
  it("replays the first answer to a retry, refuses the key for another request, keeps keys per account, and runs again after a non-final answer", async () => {
    const db = await open(mode);
    const [a, b] = await Promise.all(["A", "B"].map((name) => db.prisma.account.create({ data: { name }, select: { id: true } })));
    const same = requestFingerprint("POST", "/v2/pets", { body: { species: "DOG" } });

    expect(await claimIdempotencyKey(db.prisma, a.id, "k1", same)).toBeNull();
    await settleIdempotencyKey(db.prisma, a.id, "k1", jsonAnswer(201, { success: true, data: { id: "pet-1" } }));
    const replay = await claimIdempotencyKey(db.prisma, a.id, "k1", same);
    expect(replay?.status).toBe(201);
    expect(JSON.parse(replay!.body!)).toEqual({ success: true, data: { id: "pet-1" } });
    expect(replay?.headers["idempotent-replayed"]).toBe("true");

    const other = requestFingerprint("POST", "/v2/pets", { body: { species: "CAT" } });
    await expect(claimIdempotencyKey(db.prisma, a.id, "k1", other)).rejects.toMatchObject({ errorName: "ValidationError", details: { "idempotency-key": ["was used with another request"] } });
    expect(await claimIdempotencyKey(db.prisma, b.id, "k1", other)).toBeNull();

    // A 5xx (or 429, 503) says nothing about the request: the key is let go and a retry runs.
    expect(await claimIdempotencyKey(db.prisma, a.id, "k2", same)).toBeNull();
    await settleIdempotencyKey(db.prisma, a.id, "k2", jsonAnswer(500, { errors: [{ code: "SERVICEB2B10500" }] }));
    expect(await claimIdempotencyKey(db.prisma, a.id, "k2", same)).toBeNull();
    // A 4xx is an answer: replayed.
    await settleIdempotencyKey(db.prisma, a.id, "k2", jsonAnswer(404, { errors: [{ code: "SERVICEB2B20010" }] }));
    expect((await claimIdempotencyKey(db.prisma, a.id, "k2", same))?.status).toBe(404);
  });

  it("makes a retry wait for the first call still running, then replays its answer; concurrent retries run the call once", async () => {
    const db = await open(mode);
    const { id } = await db.prisma.account.create({ data: { name: "A" }, select: { id: true } });
    const fp = requestFingerprint("POST", "/v2/pets", {});
    const claims = await Promise.all(Array.from({ length: 5 }, () => Promise.race([claimIdempotencyKey(db.prisma, id, "k", fp), new Promise((r) => setTimeout(() => r("waiting"), 300))])));
    expect(claims.filter((c) => c === null)).toHaveLength(1);
    expect(claims.filter((c) => c === "waiting")).toHaveLength(4);
    const retry = claimIdempotencyKey(db.prisma, id, "k", fp);
    await settleIdempotencyKey(db.prisma, id, "k", jsonAnswer(201, { success: true, data: { id: "pet-9" } }));
    expect(JSON.parse((await retry)!.body!).data.id).toBe("pet-9");
  });

  it("takes over a key whose first call died unanswered, and forgets keys after 24 hours", async () => {
    const db = await open(mode);
    const { id } = await db.prisma.account.create({ data: { name: "A" }, select: { id: true } });
    const fp = requestFingerprint("POST", "/v2/pets", {});
    expect(await claimIdempotencyKey(db.prisma, id, "dead", fp)).toBeNull();
    const later = () => Date.now() + ABANDONED_AFTER_MS + 1000;
    expect(await claimIdempotencyKey(db.prisma, id, "dead", fp, later)).toBeNull();

    await settleIdempotencyKey(db.prisma, id, "dead", jsonAnswer(201, { success: true, data: { id: "p" } }));
    expect(await claimIdempotencyKey(db.prisma, id, "dead", fp)).not.toBeNull();
    expect(await claimIdempotencyKey(db.prisma, id, "dead", requestFingerprint("POST", "/v2/x", {}), () => Date.now() + IDEMPOTENCY_TTL_MS + 1000)).toBeNull();
    expect(await sweepIdempotencyKeys(db.prisma, Date.now() + IDEMPOTENCY_TTL_MS + 60_000)).toBe(1);
    expect(await db.prisma.idempotencyRecord.count()).toBe(0);
  });
});
