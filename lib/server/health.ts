import fs from "node:fs";
import { openedDb } from "@/lib/db";
import { migrationsDir } from "@/lib/db/migrate";
import { engineThreads, engineWorkerFile } from "@/lib/engine";

// GET /healthz and GET /readyz, answered by the server's door (scripts/server.mjs) without a key,
// for a load balancer or an orchestrator. Their bodies name checks, never data.

export const HEALTH_PATHS = new Set(["/healthz", "/readyz"]);

export interface HealthAnswer {
  status: 200 | 503;
  body: { status: "ok" | "unavailable"; checks?: Record<string, "ok" | "failed"> };
}

/** How long a readiness check may take before it counts as failed. */
const CHECK_TIMEOUT_MS = 2000;

function withinTimeout<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error("timed out")), CHECK_TIMEOUT_MS).unref())]);
}

function migrationNames(): string[] {
  return fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

/** Readiness: the database answers, every migration in prisma/migrations is applied, the engine's worker pool is up. */
async function readiness(): Promise<HealthAnswer> {
  const checks: Record<string, "ok" | "failed"> = { database: "failed", migrations: "failed", engine: "failed" };
  const db = openedDb();
  if (db) {
    try {
      const rows = await withinTimeout(
        db.$queryRaw<{ name: string }[]>`SELECT migration_name AS name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
      );
      checks.database = "ok";
      const applied = new Set(rows.map((r) => r.name));
      if (migrationNames().every((name) => applied.has(name))) checks.migrations = "ok";
    } catch {
      // database stays "failed"
    }
  }
  try {
    // The worker threads' file is there (a build's compiled engine) and the pool has threads.
    engineWorkerFile();
    if (engineThreads() > 0) checks.engine = "ok";
  } catch {
    // engine stays "failed"
  }
  const ready = Object.values(checks).every((c) => c === "ok");
  return { status: ready ? 200 : 503, body: { status: ready ? "ok" : "unavailable", checks } };
}

/** /healthz: the process is up and serving. /readyz: see readiness. */
export async function healthAnswer(pathname: string): Promise<HealthAnswer> {
  if (pathname === "/healthz") return { status: 200, body: { status: "ok" } };
  return readiness();
}
