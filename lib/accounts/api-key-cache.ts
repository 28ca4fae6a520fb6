import type { Db } from "@/lib/db";
import { createNotifiedCache, listeningCache, type NotifiedCache, type NotifiedCacheOptions } from "@/lib/db/notified-cache";
import { findActiveApiKeyByHash, hashApiKey, isExpired, MAX_PRESENTED_KEY_LENGTH, type AuthenticatedKey } from "./api-keys";
import { processWide } from "@/lib/process-state";

// Authenticated API keys (with their account and plan) kept in this process's memory, so that a /v2
// call does not look its key up in the database every time: the lookup (key, account, plan) cost
// more than the pet read itself. The rules every notified cache follows (a lost connection or lease,
// an overtaken lookup, the backstop age) are in lib/db/notified-cache.ts; what is particular to keys:
// - Every change that can alter what a key may do (deactivation, reissue, suspension, plan or search
//   pool change, deletion) fires a trigger that NOTIFYs API_KEY_CHANGE_CHANNEL at commit, whichever
//   process or tool made it (prisma/migrations/*_api_key_change_notifications); each process then
//   drops its whole cache. Such changes are rare; a miss costs one lookup.
// Unknown or inactive keys are never cached (the lookup finds nothing): a key issued a moment ago works at once.

export const API_KEY_CHANGE_CHANNEL = "rhinarium_api_key_change";
/** Backstop bound on a cached key's age (see above); notifications are what normally refreshes it. */
export const API_KEY_CACHE_TTL_MS = 60_000;
/** Keys kept at most (least recently used dropped first): far more than the active keys of any deployment. */
const API_KEY_CACHE_MAX_ENTRIES = 10_000;

export interface ApiKeyCache {
  /** The active key (with its account and plan) for a presented key value, or null; from memory when it can be. */
  find(db: Db, presented: string | null): Promise<AuthenticatedKey | null>;
  /**
   * The key from memory without a promise: null for a value that can be no key, undefined when `find`
   * must look (see NotifiedCache.cached: only after nextCheckPhase()).
   */
  cached(presented: string | null): AuthenticatedKey | null | undefined;
  /** Drops every cached key (a change was notified). */
  invalidate(): void;
  /** Whether notifications flow; caching happens only while they do. */
  setLive(live: boolean): void;
  size(): number;
}

export interface ApiKeyCacheOptions extends NotifiedCacheOptions {
  lookup: (db: Db, hash: string) => Promise<AuthenticatedKey | null>;
}

const CACHE_LIMITS = { ttlMs: API_KEY_CACHE_TTL_MS, maxEntries: API_KEY_CACHE_MAX_ENTRIES };

/** A key that expires while cached is refused from the moment it expires, not at the next refresh. */
function unexpired<T extends AuthenticatedKey | null | undefined>(key: T): T | null {
  return key && isExpired(key) ? null : key;
}

function apiKeyCache(cache: NotifiedCache<AuthenticatedKey>, lookup: ApiKeyCacheOptions["lookup"]): ApiKeyCache {
  return {
    async find(db, presented) {
      if (!presented || presented.length > MAX_PRESENTED_KEY_LENGTH) return null;
      // Keyed by the hash, as in the database: the map never holds a usable key.
      const hash = hashApiKey(presented);
      return unexpired(await cache.get(hash, () => lookup(db, hash)));
    },
    cached(presented) {
      if (!presented || presented.length > MAX_PRESENTED_KEY_LENGTH) return null;
      return unexpired(cache.cached(hashApiKey(presented)));
    },
    invalidate: () => cache.clear(),
    setLive: (isLive) => cache.setLive(isLive),
    size: () => cache.size(),
  };
}

export function createApiKeyCache({ lookup = findActiveApiKeyByHash, ...options }: Partial<ApiKeyCacheOptions> = {}): ApiKeyCache {
  return apiKeyCache(createNotifiedCache({ ...CACHE_LIMITS, ...options }), lookup);
}

// One cache per process (lib/process-state.ts), like the database client; it listens on the server's database.

export function serverApiKeyCache(): ApiKeyCache {
  // Any key change drops every cached key: such changes are rare, and a miss costs one lookup.
  return processWide("apiKeyCache", () =>
    apiKeyCache(listeningCache(API_KEY_CHANGE_CHANNEL, CACHE_LIMITS, (cache) => cache.clear()), findActiveApiKeyByHash),
  );
}
