import { listenToDb, type Db } from "@/lib/db";
import { logError } from "@/lib/log";
import { findActiveApiKeyByHash, hashApiKey, MAX_PRESENTED_KEY_LENGTH, type AuthenticatedKey } from "./api-keys";

// Authenticated API keys (with their account and plan) kept in this process's memory, so that a /v2
// call does not look its key up in the database every time: the lookup (key, account, plan) cost
// more than the pet read itself. What keeps the cache truthful:
// - Every change that can alter what a key may do (deactivation, reissue, suspension, plan or search
//   pool change, deletion) fires a trigger that NOTIFYs API_KEY_CHANGE_CHANNEL at commit, whichever
//   process or tool made it (prisma/migrations/*_api_key_change_notifications); each process then
//   drops its whole cache. Such changes are rare; a miss costs one lookup.
// - Keys are cached only while notifications flow: when the listening connection is lost the cache
//   is emptied and bypassed (every call looks its key up, as without a cache) until it listens again.
// - A lookup that started before a notification does not store its (possibly stale) result.
// - A key is looked up again at least every API_KEY_CACHE_TTL_MS, a backstop that no known path needs.
// Unknown or inactive keys are never cached: a key issued a moment ago works at once.

export const API_KEY_CHANGE_CHANNEL = "rhinarium_api_key_change";
/** Backstop bound on a cached key's age (see above); notifications are what normally refreshes it. */
export const API_KEY_CACHE_TTL_MS = 60_000;
/** Keys kept at most (oldest dropped first): far more than the active keys of any deployment. */
const API_KEY_CACHE_MAX_ENTRIES = 10_000;

export interface ApiKeyCache {
  /** The active key (with its account and plan) for a presented key value, or null; from memory when it can be. */
  find(db: Db, presented: string | null): Promise<AuthenticatedKey | null>;
  /** Drops every cached key (a change was notified). */
  invalidate(): void;
  /** Whether notifications flow; caching happens only while they do. */
  setLive(live: boolean): void;
  size(): number;
}

export interface ApiKeyCacheOptions {
  ttlMs: number;
  maxEntries: number;
  now: () => number;
  lookup: (db: Db, hash: string) => Promise<AuthenticatedKey | null>;
}

export function createApiKeyCache({
  ttlMs = API_KEY_CACHE_TTL_MS,
  maxEntries = API_KEY_CACHE_MAX_ENTRIES,
  now = () => performance.now(),
  lookup = findActiveApiKeyByHash,
}: Partial<ApiKeyCacheOptions> = {}): ApiKeyCache {
  const entries = new Map<string, { key: AuthenticatedKey; expiresAt: number }>();
  let live = false;
  // Bumped by every invalidation: a lookup that saw another generation start stores nothing.
  let generation = 0;
  const invalidate = () => {
    generation++;
    entries.clear();
  };
  return {
    async find(db, presented) {
      if (!presented || presented.length > MAX_PRESENTED_KEY_LENGTH) return null;
      // Keyed by the hash, as in the database: the map never holds a usable key.
      const hash = hashApiKey(presented);
      if (live) {
        // A notification read from its socket in the same turn of the event loop as this request
        // is handled before the cache is consulted (check phase after the poll phase).
        await new Promise((resolve) => setImmediate(resolve));
        const hit = entries.get(hash);
        if (hit && hit.expiresAt > now()) return hit.key;
        if (hit) entries.delete(hash);
      }
      const seen = generation;
      const key = await lookup(db, hash);
      if (key && live && generation === seen) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(hash, { key, expiresAt: now() + ttlMs });
      }
      return key;
    },
    invalidate,
    setLive(isLive) {
      // Either way, what is cached may have missed changes: start empty.
      invalidate();
      live = isLive;
    },
    size: () => entries.size,
  };
}

// One cache per process, kept on globalThis like the database client; it listens on the server's database.
const state = globalThis as unknown as { __rhinariumApiKeyCache?: ApiKeyCache };

export function serverApiKeyCache(): ApiKeyCache {
  if (!state.__rhinariumApiKeyCache) {
    const cache = createApiKeyCache();
    state.__rhinariumApiKeyCache = cache;
    listenToDb(API_KEY_CHANGE_CHANNEL, { notify: () => cache.invalidate(), live: (isLive) => cache.setLive(isLive) }).catch((error) =>
      logError("api-key-cache-listen-failed", error),
    );
  }
  return state.__rhinariumApiKeyCache;
}
