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
import { makeDataDirPrivate } from "@/lib/private-files";
import { pgliteBinaryRows, registerBinaryRows } from "./binary-rows";
import { postgresBinaryRows } from "./postgres-binary";
import { pgliteNotifications, pgNotifications, type DbNotifications } from "./notifications";

const POOL_CONNECT_TIMEOUT_MS = 5_000;
/** Far above any query of this service; a query outliving it is a database that stopped answering. */
const POOL_QUERY_TIMEOUT_MS = 30_000;

export type Db = InstanceType<typeof PrismaClient>;

export interface OpenDatabase {
  prisma: Db;
  /** The same adapter factory the client uses, so migrations run on the one PGlite instance. */
  factory: SqlMigrationAwareDriverAdapterFactory;
  mode: "pglite" | "postgres";
  /** The process's one listening connection, its lease and barrier (./notifications.ts); ended by close(). */
  notifications: DbNotifications;
  /** Embedded mode only: the whole database as PGlite's gzipped tarball, taken between two queries. */
  dump?(): Promise<Blob>;
  close(): Promise<void>;
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
    registerBinaryRows(prisma, { query: (sql) => postgresBinaryRows(pool, sql, POOL_QUERY_TIMEOUT_MS) });
    const notifications = pgNotifications(env.DATABASE_URL);
    return {
      prisma,
      factory,
      mode: "postgres",
      notifications,
      async close() {
        await notifications.close();
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }
  const dir = pgliteDir(env);
  // PGlite does not create parent folders.
  fs.mkdirSync(dir, { recursive: true });
  const pglite = await PGlite.create(dir);
  // PGlite's file system layer creates its files 0666 whatever the umask: they are tightened once
  // open and again at close; in between the folders (0700) keep them from other users.
  makeDataDirPrivate(env.dataDir);
  const factory = new PrismaPGlite(pglite);
  const prisma = new PrismaClient({ adapter: factory });
  registerBinaryRows(prisma, { query: (sql) => pgliteBinaryRows(pglite, sql) });
  return {
    prisma,
    factory,
    mode: "pglite",
    notifications: pgliteNotifications(pglite),
    dump: () => pglite.dumpDataDir("gzip"),
    async close() {
      await prisma.$disconnect();
      await pglite.close();
      makeDataDirPrivate(env.dataDir);
    },
  };
}
