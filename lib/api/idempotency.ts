import { createHash } from "node:crypto";
import type { Db } from "@/lib/db/connect";
import { ApiError, validationError } from "./errors";
import type { Endpoint } from "./endpoint";
import type { ApiAnswer } from "./exchange";

// Idempotency-Key (an addition to the contract, docs/api.md): a client that retries a create or start
// call after a lost answer sends the same key, and gets the first call's answer instead of a second
// pet, session or job. Keys are per account and remembered for 24 hours; each record holds the
// request's fingerprint, so one key reused for another request is refused rather than replayed.

export const IDEMPOTENCY_HEADER = "idempotency-key";
/** How long a key is remembered after its first use. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** How long a retry waits for the first call with its key to finish before answering 503 10503. */
export const IN_FLIGHT_WAIT_MS = 10_000;
const IN_FLIGHT_POLL_MS = 50;
/** A first call still unanswered after this died with its process (no create or start call runs this long): its key is taken over. */
export const ABANDONED_AFTER_MS = 120_000;
/** Printable ASCII, as Stripe's and the IETF draft's keys (a UUID fits). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Answers worth replaying: a 5xx, 429 or 503 says nothing about the request, so a retry runs again. */
const isFinal = (status: number) => status < 500 && status !== 429;

/** The calls that honour the header: the create and start calls (POST with a JSON body). Uploads do not. */
export function acceptsIdempotencyKey(endpoint: Pick<Endpoint, "method" | "bodyKind">): boolean {
  return endpoint.method === "POST" && endpoint.bodyKind === "json";
}

/** The header as the OpenAPI document describes it. */
export const IDEMPOTENCY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "An addition to the contract: a retry with the same key (per account, for 24 hours) answers what the first call answered, with `Idempotent-Replayed: true`, instead of creating again. The same key with another request: 400 10001.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
} as const;

/** The key of a request, or undefined when it sends none; 10001 for a key that is not printable ASCII of 1–255 characters. */
export function idempotencyKeyOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!KEY_PATTERN.test(value)) throw validationError(IDEMPOTENCY_HEADER, "must be 1 to 255 printable ASCII characters");
  return value;
}

/** What makes two requests the same: method, target and the validated input. */
export function requestFingerprint(method: string, target: string, input: unknown): string {
  return createHash("sha256").update(`${method} ${target}\n${JSON.stringify(input)}`).digest("hex");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Claims a key for this request: null when the request is to run (its answer is then recorded with
 * settleIdempotencyKey), or the first call's answer to replay. The same key with another request is
 * 10001; a first call still running is waited for, up to IN_FLIGHT_WAIT_MS, then 503 10503.
 */
export async function claimIdempotencyKey(db: Db, accountId: string, key: string, fingerprint: string, now: () => number = Date.now): Promise<ApiAnswer | null> {
  const started = now();
  for (;;) {
    const { count } = await db.idempotencyRecord.createMany({ data: [{ accountId, key, fingerprint }], skipDuplicates: true });
    if (count === 1) return null;
    const row = await db.idempotencyRecord.findUnique({ where: { accountId_key: { accountId, key } } });
    if (!row) continue; // the first call failed and let its key go meanwhile
    const age = now() - row.createdAt.getTime();
    if (age > IDEMPOTENCY_TTL_MS || (row.status === null && age > ABANDONED_AFTER_MS)) {
      await db.idempotencyRecord.deleteMany({ where: { accountId, key, createdAt: row.createdAt } });
      continue;
    }
    if (row.fingerprint !== fingerprint) throw validationError(IDEMPOTENCY_HEADER, "was used with another request");
    if (row.status !== null) {
      return { status: row.status, headers: { "content-type": "application/json", "idempotent-replayed": "true" }, body: row.body };
    }
    if (now() - started > IN_FLIGHT_WAIT_MS) throw new ApiError("ServiceUnavailableError", undefined, 1);
    await sleep(IN_FLIGHT_POLL_MS);
  }
}

/** Records the answer of a claimed key for its retries, or lets the key go when the answer is not final. */
export async function settleIdempotencyKey(db: Db, accountId: string, key: string, answer: ApiAnswer): Promise<void> {
  if (isFinal(answer.status)) {
    await db.idempotencyRecord.update({ where: { accountId_key: { accountId, key } }, data: { status: answer.status, body: answer.body } });
  } else {
    await db.idempotencyRecord.deleteMany({ where: { accountId, key, status: null } });
  }
}

/** Forgets keys older than the TTL (run with the other periodic sweeps). */
export async function sweepIdempotencyKeys(db: Db, now: number = Date.now()): Promise<number> {
  const { count } = await db.idempotencyRecord.deleteMany({ where: { createdAt: { lt: new Date(now - IDEMPOTENCY_TTL_MS) } } });
  return count;
}
