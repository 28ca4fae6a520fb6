import { logError } from "@/lib/log";
import { serverNotifications } from "./index";
import type { DbNotifications } from "./notifications";

// Database state kept in a web process's memory and dropped when a trigger's notification names it
// (./notifications.ts: one listening connection per process, its lease and the writers' barrier).
// The rules, the same for every such cache (the API key cache, the pet view cache):
// - Nothing is answered from memory unless the process listens (live) and holds its lease (fresh):
//   when the connection is lost, everything cached is dropped and every read goes to the database
//   until it listens again.
// - A read that a notification for its key (or a flush) overtook does not store its answer: it may
//   have been read before the change committed.
// - Only what the read found is stored: a miss is never cached (a new row is seen at once).
// - An entry is read again after at most ttlMs whatever happens (a backstop), and at most maxEntries
//   are kept, the least recently used dropped first.

export interface NotifiedCache<V> {
  /** The value for `key`: from memory when it can be and `usable` accepts it, else from `load` (null: not found). */
  get(key: string, load: () => Promise<V | null>, usable?: (value: V) => boolean): Promise<V | null>;
  /**
   * What `get` would answer from memory, without a promise, or undefined when it would load. Only for
   * a caller that has awaited nextCheckPhase() since its request was read (the rule `get` keeps by
   * waiting itself): the API's wrapper waits once and then reads both its caches this way.
   */
  cached(key: string, usable?: (value: V) => boolean): V | undefined;
  /** Drops one key (a notification named it). */
  invalidate(key: string): void;
  /** Drops everything (a notification that names no key). */
  clear(): void;
  /** Whether notifications flow; nothing is cached while they do not. */
  setLive(live: boolean): void;
  size(): number;
}

export interface NotifiedCacheOptions {
  ttlMs: number;
  maxEntries: number;
  now: () => number;
  /** The lease (DbNotifications.fresh): checked on every read and every store. */
  fresh: () => boolean;
}

/**
 * Resolves in the check phase of the event loop's current turn (after its poll phase, where sockets
 * are read): a notification read in the same turn as the caller's request has been applied by then.
 * One immediate and one promise serve every caller of the turn (each GET consults two caches, and
 * the requests of one turn arrive together), instead of a setImmediate and a promise per read.
 */
let checkPhase: Promise<void> | undefined;
export function nextCheckPhase(): Promise<void> {
  if (!checkPhase) {
    checkPhase = new Promise((resolve) =>
      setImmediate(() => {
        // A caller from here on waits for the next turn's check phase.
        checkPhase = undefined;
        resolve();
      }),
    );
  }
  return checkPhase;
}

export function createNotifiedCache<V>({ ttlMs, maxEntries, now = () => performance.now(), fresh = () => true }: Pick<NotifiedCacheOptions, "ttlMs" | "maxEntries"> & Partial<NotifiedCacheOptions>): NotifiedCache<V> {
  const entries = new Map<string, { value: V; expiresAt: number }>();
  // Reads under way, each marked when a notification for its key arrives before its answer.
  const reads = new Set<{ key: string; overtaken: boolean }>();
  let live = false;
  const clear = () => {
    entries.clear();
    for (const read of reads) read.overtaken = true;
  };
  function cached(key: string, usable: (value: V) => boolean = () => true): V | undefined {
    if (!(live && fresh())) return undefined;
    const hit = entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    if (!usable(hit.value)) return undefined;
    entries.delete(key); // re-inserted last: the Map's order is the recency order
    entries.set(key, hit);
    return hit.value;
  }
  return {
    async get(key, load, usable = () => true) {
      if (live && fresh()) {
        // A notification read from its socket in the same turn of the event loop as this request
        // is applied before the cache is consulted (check phase after the poll phase).
        await nextCheckPhase();
        const hit = cached(key, usable);
        if (hit !== undefined) return hit;
      }
      const read = { key, overtaken: false };
      reads.add(read);
      let value: V | null;
      try {
        value = await load();
      } finally {
        reads.delete(read);
      }
      if (value !== null && !read.overtaken && live && fresh()) {
        entries.delete(key);
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(key, { value, expiresAt: now() + ttlMs });
      }
      return value;
    },
    cached,
    invalidate(key) {
      entries.delete(key);
      for (const read of reads) if (read.key === key) read.overtaken = true;
    },
    clear,
    setLive(isLive) {
      // Either way, what is cached may have missed changes: start empty.
      clear();
      live = isLive;
    },
    size: () => entries.size,
  };
}

/**
 * A cache of this server process kept up to date by `channel`: `onNotify` applies a payload to it.
 * The listening connection is opened on first use (the server opens it at start-up).
 */
export function listeningCache<V>(
  channel: string,
  options: Pick<NotifiedCacheOptions, "ttlMs" | "maxEntries">,
  onNotify: (cache: NotifiedCache<V>, payload: string) => void,
): NotifiedCache<V> {
  let notifications: DbNotifications | undefined;
  const cache = createNotifiedCache<V>({ ...options, fresh: () => !!notifications?.fresh() });
  serverNotifications().then(
    (n) => {
      notifications = n;
      n.listen(channel, { notify: (payload) => onNotify(cache, payload), live: (isLive) => cache.setLive(isLive) });
    },
    (error) => logError("cache-listen-failed", error, { channel }),
  );
  return cache;
}

/**
 * For a writer, after the commit of a change that a notified cache may hold and before the change is
 * acknowledged: resolves once no web process can answer from memory what the commit made stale (the
 * barrier, ./notifications.ts). Usually one round trip through every listening process; at most the
 * lease (LEASE_MS) when one of them does not answer.
 */
export async function awaitCacheInvalidation(): Promise<void> {
  await (await serverNotifications()).barrier();
}
