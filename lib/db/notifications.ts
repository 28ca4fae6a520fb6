import { randomUUID } from "node:crypto";
import pg from "pg";
import type { PGlite } from "@electric-sql/pglite";
import { logError, logInfo } from "@/lib/log";

// How a web process keeps database state in memory without serving it stale (the API key cache,
// the pet view cache: lib/db/notified-cache.ts). Triggers NOTIFY a channel at commit whenever cached
// state changes, whichever process or tool made the change; each process listens on ONE connection
// of its own and drops what a notification names. Two things make that strict rather than "usually
// in time" (README, choices: "Read-your-writes"):
//
// - A lease. A process answers from memory only while it can prove it has applied every notification
//   committed up to a recent moment: every PING_MS it NOTIFYs a ping on SYNC_CHANNEL from its listening
//   connection, and PostgreSQL delivers notifications to a listener in commit order, so once its own
//   ping comes back, every notification committed before the ping was sent has been applied. What it
//   cached stays usable until LEASE_MS after the last returned ping was sent, no longer. A process
//   whose connection died unnoticed, or whose event loop stalled, stops answering from memory within
//   LEASE_MS, by itself.
// - A barrier, for writers. After its commit a writer NOTIFYs a barrier token; every listening process
//   answers with an ack once it reaches the token (so after it applied the writer's invalidations),
//   and the writer waits for the ack of every process that has pinged within the lease. A process
//   that does not ack is waited out: once LEASE_MS has passed since its last ping, it cannot answer
//   from memory anything from before the write. The write is acknowledged after the barrier, so the
//   next read through any process sees it. A barrier never waits more than LEASE_MS (+ margin) in all:
//   any lease still running then was taken by a ping sent after the commit.

/** Carries pings, barriers and acks between the processes that cache (one channel for all). */
export const SYNC_CHANNEL = "rhinarium_cache_sync";
/** How often a process renews its lease. */
export const PING_MS = 250;
/** How long a returned ping lets a process answer from memory (4 pings: one late ping costs nothing). */
export const LEASE_MS = 1_000;
/** Added by a waiting writer to every lease: two processes' monotonic clocks tick at rates this close. */
const CLOCK_MARGIN_MS = 50;
const CONNECT_TIMEOUT_MS = 5_000;
/** Reconnection of a lost listening connection: 250 ms doubling to 10 s. */
const LISTEN_RETRY_MS = { first: 250, max: 10_000 };

/**
 * What a process that caches database state needs from a notification channel: each notification's
 * payload, and whether notifications are flowing at all. `live(false)` comes as soon as the listening
 * connection is lost (notifications may be missed from then on), `live(true)` once it listens again.
 */
export interface NotificationHandlers {
  notify(payload: string): void;
  live(isLive: boolean): void;
}

export interface BarrierOutcome {
  /** Other processes that acked. */
  acks: number;
  /** Processes waited out (no ack within their lease), or everything when this process was not listening. */
  waitedOut: number;
  ms: number;
}

export interface DbNotifications {
  /** Subscribes to a NOTIFY channel (on the process's one listening connection, opened on first use). */
  listen(channel: string, handlers: NotificationHandlers): void;
  /** Whether this process may answer from memory now (see the lease above). */
  fresh(): boolean;
  /**
   * Resolves once no process can answer from memory anything that a notification committed before
   * the call made stale (see the barrier above). Never rejects.
   */
  barrier(): Promise<BarrierOutcome>;
  close(): Promise<void>;
}

export interface PgNotificationOptions {
  pingMs: number;
  leaseMs: number;
  now: () => number;
}

interface Session {
  /** Also the connection's application_name suffix, so an operator can find it in pg_stat_activity. */
  id: string;
  client: pg.Client;
  /** When LISTEN succeeded (null until then): pings sent by others before it were not seen here. */
  liveSince: number | null;
  leaseUntil: number;
  /** Sequence number → when that ping was sent. */
  pings: Map<number, number>;
  nextPing: number;
  pingTimer?: NodeJS.Timeout;
}

interface PendingBarrier {
  /** Set when this process reaches its own token: the other processes that held a lease then, with when their last ping arrived. */
  expected?: Map<string, number>;
  acked: Set<string>;
  check(): void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * PostgreSQL: one connection of its own (a pooled one could not stay in LISTEN), opened on the first
 * listen() or barrier() and reconnected after any loss.
 */
export function pgNotifications(url: string, options: Partial<PgNotificationOptions> = {}): DbNotifications {
  const { pingMs = PING_MS, leaseMs = LEASE_MS, now = () => performance.now() } = options;
  const subscribers = new Map<string, Set<NotificationHandlers>>();
  /** Other processes' ids → when their latest ping arrived here. */
  const peers = new Map<string, number>();
  const barriers = new Map<string, PendingBarrier>();
  let session: Session | undefined;
  let started = false;
  let closed = false;
  let retryMs = LISTEN_RETRY_MS.first;
  let retryTimer: NodeJS.Timeout | undefined;

  const live = () => (session?.liveSince != null ? session : undefined);
  const send = (s: Session, payload: string) => s.client.query("SELECT pg_notify($1, $2)", [SYNC_CHANNEL, payload]);

  const ping = (s: Session) => {
    const seq = s.nextPing++;
    const sentAt = now();
    s.pings.set(seq, sentAt);
    for (const [old, at] of s.pings) if (at < sentAt - leaseMs) s.pings.delete(old);
    // Processes gone without a "bye" (killed, reconnected under a new id) are forgotten once their lease ran.
    for (const [peer, seen] of peers) if (seen + leaseMs + CLOCK_MARGIN_MS < sentAt) peers.delete(peer);
    send(s, `ping ${s.id} ${seq}`).catch(() => undefined); // a lost connection is handled by its events
  };

  const onSync = (s: Session, payload: string) => {
    const [kind, first, second] = payload.split(" ");
    if (kind === "ping") {
      if (first === s.id) {
        const sentAt = s.pings.get(Number(second));
        if (sentAt !== undefined) s.leaseUntil = Math.max(s.leaseUntil, sentAt + leaseMs);
      } else {
        peers.set(first, now());
      }
    } else if (kind === "barrier") {
      // Every notification committed before the token has been applied (they came first): ack.
      if (second === s.id) {
        const pending = barriers.get(first);
        if (pending && !pending.expected) {
          const t = now();
          pending.expected = new Map([...peers].filter(([, seen]) => seen + leaseMs + CLOCK_MARGIN_MS > t));
          pending.check();
        }
      } else {
        send(s, `ack ${first} ${s.id}`).catch(() => undefined);
      }
    } else if (kind === "ack") {
      const pending = barriers.get(first);
      if (pending) {
        pending.acked.add(second);
        pending.check();
      }
    } else if (kind === "bye") {
      // It stopped answering from memory before saying so: as good as an ack for barriers under way.
      peers.delete(first);
      for (const pending of barriers.values()) {
        pending.acked.add(first);
        pending.check();
      }
    }
  };

  const connect = async () => {
    retryTimer = undefined;
    if (closed) return;
    const id = randomUUID();
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true, application_name: `rhinarium-cache:${id}` });
    const current: Session = { id, client, liveSince: null, leaseUntil: 0, pings: new Map(), nextPing: 0 };
    session = current;
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      clearInterval(current.pingTimer);
      const wasLive = current.liveSince !== null;
      current.liveSince = null;
      current.leaseUntil = 0;
      if (wasLive) for (const set of subscribers.values()) for (const handlers of set) handlers.live(false);
      if (!closed) logError("database-listen-connection-lost", error ?? new Error("connection ended"));
      client.removeAllListeners("notification");
      client.end().catch(() => undefined);
      if (!closed) {
        retryTimer = setTimeout(() => void connect(), retryMs).unref();
        retryMs = Math.min(retryMs * 2, LISTEN_RETRY_MS.max);
      }
    };
    client.on("error", onLost);
    client.on("end", () => onLost());
    client.on("notification", (message) => {
      const payload = message.payload ?? "";
      if (message.channel === SYNC_CHANNEL) return onSync(current, payload);
      for (const handlers of subscribers.get(message.channel) ?? []) handlers.notify(payload);
    });
    try {
      await client.connect();
      // Channels subscribed while this runs are listened to as well, before anyone hears live(true).
      const listened = new Set<string>();
      for (let channel: string | undefined = SYNC_CHANNEL; channel; channel = [...subscribers.keys()].find((c) => !listened.has(c))) {
        await client.query(`LISTEN "${channel}"`);
        listened.add(channel);
      }
    } catch (error) {
      onLost(error);
      return;
    }
    if (lost || closed) return;
    retryMs = LISTEN_RETRY_MS.first;
    current.liveSince = now();
    for (const set of subscribers.values()) for (const handlers of set) handlers.live(true);
    ping(current);
    current.pingTimer = setInterval(() => ping(current), pingMs).unref();
  };

  const start = () => {
    if (started || closed) return;
    started = true;
    void connect();
  };

  return {
    listen(channel, handlers) {
      const isNew = !subscribers.has(channel);
      if (isNew) subscribers.set(channel, new Set());
      subscribers.get(channel)!.add(handlers);
      const s = live();
      if (!s) return start(); // live(true) comes once the connection listens on every channel
      if (!isNew) return handlers.live(true);
      s.client.query(`LISTEN "${channel}"`).then(
        () => {
          if (live() === s) handlers.live(true);
        },
        () => undefined, // the connection is lost: every subscriber hears live(false), then live(true) on reconnection
      );
    },
    fresh() {
      const s = live();
      return !!s && now() < s.leaseUntil;
    },
    async barrier() {
      start();
      const startedAt = now();
      // Any lease still running after this was taken by a ping sent after the caller's commit.
      const deadline = startedAt + leaseMs + CLOCK_MARGIN_MS;
      const s = live();
      if (!s) {
        await sleep(deadline - now());
        return { acks: 0, waitedOut: 1, ms: now() - startedAt };
      }
      const token = randomUUID();
      const outcome = await new Promise<Omit<BarrierOutcome, "ms">>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const finish = (waitedOut: number) => {
          clearTimeout(timer);
          barriers.delete(token);
          resolve({ acks: pending.acked.size, waitedOut });
        };
        const pending: PendingBarrier = {
          acked: new Set(),
          check() {
            if (!pending.expected) return;
            const t = now();
            // Until this process has listened for a whole lease, another may hold one it never saw.
            let waitUntil = s.liveSince === null ? deadline : s.liveSince + leaseMs + CLOCK_MARGIN_MS;
            let silent = 0;
            for (const [peer, seen] of pending.expected) {
              if (pending.acked.has(peer)) continue;
              silent++;
              waitUntil = Math.max(waitUntil, seen + leaseMs + CLOCK_MARGIN_MS);
            }
            waitUntil = Math.min(waitUntil, deadline);
            clearTimeout(timer);
            if (t >= waitUntil) finish(silent);
            else timer = setTimeout(() => pending.check(), waitUntil - t);
          },
        };
        barriers.set(token, pending);
        timer = setTimeout(() => finish(1), deadline - now());
        send(s, `barrier ${token} ${s.id}`).catch(() => undefined); // lost: the deadline ends the wait
      });
      const ms = now() - startedAt;
      if (outcome.waitedOut > 0) logInfo("cache-barrier-waited-out", { ms: Math.round(ms), waitedOut: outcome.waitedOut });
      return { ...outcome, ms };
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const s = session;
      session = undefined;
      if (!s) return;
      clearInterval(s.pingTimer);
      const wasLive = s.liveSince !== null;
      s.liveSince = null;
      if (wasLive) {
        for (const set of subscribers.values()) for (const handlers of set) handlers.live(false);
        // The others need not wait out this process's lease in their next barriers.
        await send(s, `bye ${s.id}`).catch(() => undefined);
      }
      await s.client.end().catch(() => undefined);
    },
  };
}

/**
 * PGlite: one instance in one process. A notification is delivered (as a microtask) with the output
 * of the statement that committed it, before that statement's promise resolves: when a write returns,
 * the cache has already dropped what it changed. There is no other process, so the barrier has
 * nothing to wait for and the instance never loses its "connection".
 */
export function pgliteNotifications(pglite: PGlite): DbNotifications {
  return {
    listen(channel, handlers) {
      void pglite.listen(channel, (payload) => handlers.notify(payload)).then(
        () => handlers.live(true),
        (error) => logError("database-listen-failed", error, { channel }),
      );
    },
    fresh: () => true,
    barrier: async () => ({ acks: 0, waitedOut: 0, ms: 0 }),
    close: async () => undefined,
  };
}
