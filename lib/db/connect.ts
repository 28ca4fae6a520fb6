import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaClient } from "@/lib/generated/prisma/client";
import type { Env } from "@/lib/env";
import { logError } from "@/lib/log";

const POOL_CONNECT_TIMEOUT_MS = 5_000;
/** Far above any query of this service; a query outliving it is a database that stopped answering. */
const POOL_QUERY_TIMEOUT_MS = 30_000;

export type Db = InstanceType<typeof PrismaClient>;

export interface OpenDatabase {
  prisma: Db;
  /** The same adapter factory the client uses, so migrations run on the one PGlite instance. */
  factory: SqlMigrationAwareDriverAdapterFactory;
  mode: "pglite" | "postgres";
  /** Subscribes to a NOTIFY channel; see NotificationHandlers. Ended by close(). */
  listen(channel: string, handlers: NotificationHandlers): void;
  close(): Promise<void>;
}

/**
 * What a process that caches database state needs from a notification channel: each notification,
 * and whether notifications are flowing at all. `live(false)` comes as soon as the listening
 * connection is lost (notifications may be missed from then on), `live(true)` once it listens again.
 */
export interface NotificationHandlers {
  notify(): void;
  live(isLive: boolean): void;
}

/** Reconnection of a lost listening connection: 250 ms doubling to 10 s. */
const LISTEN_RETRY_MS = { first: 250, max: 10_000 };

/**
 * PostgreSQL: a connection of its own (a pooled one could not stay in LISTEN), reconnected after any
 * loss. Each (re)connection reports live(true) only once LISTEN has succeeded.
 */
function listenOnPostgres(url: string, channel: string, handlers: NotificationHandlers): () => Promise<void> {
  let closed = false;
  let client: pg.Client | undefined;
  let retryMs = LISTEN_RETRY_MS.first;
  let timer: NodeJS.Timeout | undefined;
  const connect = async () => {
    timer = undefined;
    if (closed) return;
    const current = new pg.Client({ connectionString: url, connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS, keepAlive: true, application_name: `rhinarium-listen-${channel}` });
    client = current;
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      handlers.live(false);
      if (!closed) logError("database-listen-connection-lost", error ?? new Error("connection ended"), { channel });
      current.removeAllListeners("notification");
      current.end().catch(() => undefined);
      if (!closed) {
        timer = setTimeout(() => void connect(), retryMs).unref();
        retryMs = Math.min(retryMs * 2, LISTEN_RETRY_MS.max);
      }
    };
    current.on("error", onLost);
    current.on("end", () => onLost());
    current.on("notification", (message) => {
      if (message.channel === channel) handlers.notify();
    });
    try {
      await current.connect();
      await current.query(`LISTEN "${channel}"`);
    } catch (error) {
      onLost(error);
      return;
    }
    if (lost || closed) return;
    retryMs = LISTEN_RETRY_MS.first;
    handlers.live(true);
  };
  void connect();
  return async () => {
    closed = true;
    if (timer) clearTimeout(timer);
    handlers.live(false);
    await client?.end().catch(() => undefined);
  };
}

export function pgliteDir(env: Env): string {
  return path.join(env.dataDir, "db");
}

/**
 * PostgreSQL: the schema engine takes Prisma's migration advisory lock and leaves it on its
 * connection, so it gets a pool of its own, ended right after migrating; on the shared pool the lock
 * would stay until the connection idled out, stalling every other process's migration for 10 s.
 */
export async function withMigrationFactory<T>(
  env: Env,
  shared: SqlMigrationAwareDriverAdapterFactory,
  run: (factory: SqlMigrationAwareDriverAdapterFactory) => Promise<T>,
): Promise<T> {
  if (!env.DATABASE_URL) return run(shared);
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
  try {
    return await run(new PrismaPg(pool));
  } finally {
    await pool.end();
  }
}

export async function openDatabase(env: Env): Promise<OpenDatabase> {
  if (env.DATABASE_URL) {
    // Our own pool, so that close() ends every connection, including the schema engine's.
    // During a database outage a request fails within the connect timeout (503, retried by the
    // client) instead of hanging; an idle connection the server drops is an 'error' event that
    // must be handled, or Node ends the process on it.
    const pool = new pg.Pool({
      connectionString: env.DATABASE_URL,
      max: 10,
      connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
      query_timeout: POOL_QUERY_TIMEOUT_MS,
      keepAlive: true,
    });
    pool.on("error", (error) => logError("database-idle-connection-lost", error));
    const factory = new PrismaPg(pool);
    const prisma = new PrismaClient({ adapter: factory });
    const listeners: (() => Promise<void>)[] = [];
    const url = env.DATABASE_URL;
    return {
      prisma,
      factory,
      mode: "postgres",
      listen(channel, handlers) {
        listeners.push(listenOnPostgres(url, channel, handlers));
      },
      async close() {
        await Promise.all(listeners.map((stop) => stop()));
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }
  const dir = pgliteDir(env);
  // PGlite does not create parent folders.
  fs.mkdirSync(dir, { recursive: true });
  const pglite = await PGlite.create(dir);
  const factory = new PrismaPGlite(pglite);
  const prisma = new PrismaClient({ adapter: factory });
  return {
    prisma,
    factory,
    mode: "pglite",
    // One instance, one process: notifications arrive with the results of the statement that
    // committed them, and the instance never loses its "connection".
    listen(channel, handlers) {
      void pglite.listen(channel, () => handlers.notify()).then(() => handlers.live(true), (error) => logError("database-listen-failed", error, { channel }));
    },
    async close() {
      await prisma.$disconnect();
      await pglite.close();
    },
  };
}
