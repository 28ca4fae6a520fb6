import { readEnv, type Env } from "@/lib/env";
import { openDatabase, withMigrationFactory, type Db, type OpenDatabase } from "./connect";
import type { DbNotifications } from "./notifications";
import { applyMigrations } from "./migrate";
import { keepStatistics } from "./embedded-statistics";
import { acquireOwnerLock, OwnerBusyError, releaseOwnerLock, type OwnerInfo } from "./owner-lock";
import { makeDataDirPrivate } from "@/lib/private-files";
import { processSlot } from "@/lib/process-state";

export type { Db } from "./connect";

/**
 * Opens the database for a process that will own it: makes DATA_DIR private (lib/private-files.ts),
 * takes the owner lock (embedded mode) and applies pending migrations. Used by the server and by the
 * ops CLI when no server runs; each of them then makes sure the default plans exist
 * (lib/accounts/plans.ts, ensureDefaultPlans): rows are the features' business, not the platform's.
 */
export async function openOwnedDatabase(env: Env, role: OwnerInfo["role"]): Promise<OpenDatabase> {
  makeDataDirPrivate(env.dataDir);
  if (!env.DATABASE_URL) await acquireOwnerLockPatiently(env, role);
  try {
    const db = await openDatabase(env);
    await withMigrationFactory(env, db.factory, applyMigrations);
    // PostgreSQL's autovacuum keeps its planner statistics; the embedded database has none (lib/db/embedded-statistics.ts).
    const stopStatistics = db.mode === "pglite" ? await keepStatistics(db.prisma) : null;
    return {
      ...db,
      async close() {
        await stopStatistics?.();
        await db.close();
        if (!env.DATABASE_URL) releaseOwnerLock(env);
      },
    };
  } catch (error) {
    if (!env.DATABASE_URL) releaseOwnerLock(env);
    throw error;
  }
}

/** How long a starting server waits for an ops CLI command that holds the database to finish. */
const CLI_OWNER_WAIT_MS = 60_000;
/** How long it waits for another server to go away: one killed a moment ago may not be reaped yet. */
const SERVER_OWNER_WAIT_MS = 5_000;

/**
 * A server that finds an ops CLI command holding the database waits for it to finish (seconds), and
 * gives a server that holds it a few seconds to end (a restart right after a crash); the CLI, or a
 * server still running after that, is an error.
 */
async function acquireOwnerLockPatiently(env: Env, role: OwnerInfo["role"]): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      acquireOwnerLock(env, role);
      return;
    } catch (error) {
      if (role !== "server" || !(error instanceof OwnerBusyError)) throw error;
      const patience = error.owner.role === "cli" ? CLI_OWNER_WAIT_MS : SERVER_OWNER_WAIT_MS;
      if (Date.now() - started > patience) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

// One client per process, kept in lib/process-state.ts so that Next's module reloading in dev reuses it.
const database = processSlot<Promise<OpenDatabase>>("database");
const openedDatabase = processSlot<OpenDatabase>("openedDatabase");

function openServerDatabase(): Promise<OpenDatabase> {
  let opening = database.get();
  if (!opening) {
    const env = readEnv();
    const started = openOwnedDatabase(env, "server");
    opening = started;
    database.set(started);
    started.then(
      (open) => {
        if (database.get() === started) openedDatabase.set(open);
      },
      () => {
        database.set(undefined);
      },
    );
  }
  return opening;
}

/** The process's database client if it is open already, without a promise (the API's hot path); else getDb. */
export function openedDb(): Db | undefined {
  return openedDatabase.get()?.prisma;
}

export async function getDb(): Promise<Db> {
  return (await openServerDatabase()).prisma;
}

/** This process's listening connection on its database: channels, lease and barrier (./notifications.ts). */
export async function serverNotifications(): Promise<DbNotifications> {
  return (await openServerDatabase()).notifications;
}

export async function closeDb(): Promise<void> {
  const open = database.get();
  database.set(undefined);
  openedDatabase.set(undefined);
  if (open) await (await open).close();
}

/** This server process's embedded database as a tarball (see OpenDatabase.dump); undefined in PostgreSQL mode. */
export async function dumpServerDatabase(): Promise<Blob | undefined> {
  const open = await openServerDatabase();
  return open.dump?.();
}
