import type { Db } from "./connect";
import { logError, logInfo } from "@/lib/log";

/** How often the embedded database's owner looks for tables that changed size. */
const CHECK_MS = 10 * 60_000;

/**
 * The embedded database (PGlite) runs no autovacuum daemon, so nothing gathers the query planner's statistics there:
 * without them it plans every query as if each table held a few rows (a gallery load's batch of 1,000 pets sorted
 * every pet of the account, each time: decision 0050). Analyses the schema's tables that were never analysed, or
 * whose heap grew or shrank by more than a tenth (and more than a page) since they were; resolves their names. Its
 * own size rule, not autovacuum's change counters: PGlite does not keep those across a restart.
 */
export async function analyzeChangedTables(db: Db): Promise<string[]> {
  const rows = await db.$queryRaw<{ name: string }[]>`
    SELECT format('%I', c.relname) AS name
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind = 'r'
      AND (c.reltuples < 0 OR abs(pg_relation_size(c.oid) / current_setting('block_size')::int - c.relpages) > greatest(1, c.relpages / 10))
    ORDER BY c.relname`;
  const names = rows.map((row) => row.name);
  // One statement a table: PGlite runs in its owner's process, and other queries (requests) take their turn between
  // tables rather than after all of them. The names are the catalog's own, quoted by format('%I').
  for (const name of names) await db.$executeRawUnsafe(`ANALYZE ${name}`);
  return names;
}

/**
 * Keeps the embedded database's statistics current for as long as its owner has it open: analyses now (before the
 * process plans its first query, a gallery preload among them), then looks again every CHECK_MS. Resolves its stop, which waits for an analysis under way.
 */
export async function keepStatistics(db: Db, checkMs = CHECK_MS): Promise<() => Promise<void>> {
  const analyze = async () => {
    const started = Date.now();
    const tables = await analyzeChangedTables(db);
    if (tables.length > 0) logInfo("database-analyzed", { tables, ms: Date.now() - started });
  };
  // Statistics make plans faster, not answers right: a failure is logged and the next check tries again.
  const analyzeLogged = () => analyze().catch((error: unknown) => logError("database-analyze-failed", error));
  await analyzeLogged();
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    running ??= analyzeLogged().finally(() => {
        running = null;
      });
  }, checkMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
