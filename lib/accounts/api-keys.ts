import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Db } from "@/lib/db/connect";

// API keys carry 256 bits of randomness, so a fast hash (SHA-256) is enough: there is nothing to
// brute-force that a slow password hash would protect. Only the hash is stored.

const KEY_PREFIX = "rk_";
const SHOWN_PREFIX_LENGTH = 10;

/** One-shot `crypto.hash` (no Hash object per call: a quarter of createHash's time, and every API call hashes its key). */
export function hashApiKey(key: string): string {
  return hash("sha256", key, "hex");
}

/**
 * Active keys one account may hold: each key has its own rate limit, so the cap bounds how far an
 * account can multiply it.
 */
export const MAX_ACTIVE_KEYS_PER_ACCOUNT = 5;

export class KeyLimitError extends Error {
  constructor() {
    super(`an account holds at most ${MAX_ACTIVE_KEYS_PER_ACCOUNT} active API keys: deactivate one first`);
  }
}

export const MAX_KEY_NAME_LENGTH = 60;

export interface NewKeyOptions {
  /** What the owner calls the key; empty when not given. */
  name?: string;
  /** When the key stops working (refused as 401 10000 afterwards); never when absent. */
  expiresAt?: Date | null;
}

/** Whether a key has expired at `now` (a key without expiry never does). */
export function isExpired(key: { expiresAt?: Date | null }, now = Date.now()): boolean {
  return key.expiresAt != null && key.expiresAt.getTime() <= now;
}

export async function issueApiKey(db: Pick<Db, "apiKey">, accountId: string, options: NewKeyOptions = {}): Promise<{ apiKey: string; keyId: string }> {
  const now = new Date();
  // An expired key no longer counts towards the cap: it can do nothing.
  const active = await db.apiKey.count({ where: { accountId, active: true, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] } });
  if (active >= MAX_ACTIVE_KEYS_PER_ACCOUNT) throw new KeyLimitError();
  const apiKey = KEY_PREFIX + randomBytes(32).toString("base64url");
  const row = await db.apiKey.create({
    data: {
      accountId,
      hash: hashApiKey(apiKey),
      prefix: apiKey.slice(0, SHOWN_PREFIX_LENGTH),
      name: (options.name ?? "").trim().slice(0, MAX_KEY_NAME_LENGTH),
      expiresAt: options.expiresAt ?? null,
    },
  });
  return { apiKey, keyId: row.id };
}

/** Deactivates every active key of the account and issues a new one, shown once. */
export async function reissueApiKey(db: Db, accountId: string, options: NewKeyOptions = {}): Promise<{ apiKey: string; keyId: string }> {
  await deactivateApiKeys(db, accountId);
  return issueApiKey(db, accountId, options);
}

export async function deactivateApiKeys(db: Db, accountId: string): Promise<number> {
  const { count } = await db.apiKey.updateMany({ where: { accountId, active: true }, data: { active: false } });
  return count;
}

export type AuthenticatedKey = NonNullable<Awaited<ReturnType<typeof findActiveApiKeyByHash>>>;

/** Longer presented values are not keys of ours; they are refused without hashing (api-key-cache.ts). */
export const MAX_PRESENTED_KEY_LENGTH = 200;

/**
 * The active, unexpired key (with its account and plan) whose hash is `hash`, or null. A presented key value is
 * authenticated through the key cache (`serverApiKeyCache().find`), which hashes it and calls this.
 */
export async function findActiveApiKeyByHash(db: Db, hash: string) {
  const key = await db.apiKey.findUnique({ where: { hash }, include: { account: { include: { plan: true } } } });
  // The lookup is by hash already; the constant-time comparison keeps the final check free of
  // timing differences should the lookup ever change to a prefix search.
  if (!key || !key.active || isExpired(key) || !timingSafeEqual(Buffer.from(key.hash), Buffer.from(hash))) return null;
  return key;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Records use of a key, at most once a minute per key so that reads do not all become writes. The
 * key object is updated too: it may be the one the key cache hands to every request of the minute.
 * Undefined when there is nothing to write (most calls: no promise made for them).
 */
export function touchApiKey(db: Db, key: { id: string; lastUsedAt: Date | null }): Promise<void> | undefined {
  const now = Date.now();
  if (key.lastUsedAt && now - key.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return undefined;
  key.lastUsedAt = new Date(now);
  return db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: key.lastUsedAt } }).then(() => undefined);
}

/** Deactivates one key of the account; false when the account has no such active key. */
export async function deactivateApiKey(db: Db, accountId: string, keyId: string): Promise<boolean> {
  const { count } = await db.apiKey.updateMany({ where: { id: keyId, accountId, active: true }, data: { active: false } });
  return count === 1;
}
