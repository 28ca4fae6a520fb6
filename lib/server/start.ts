import { serverApiKeyCache } from "@/lib/accounts/api-key-cache";
import { ensureDefaultPlans } from "@/lib/accounts/plans";
import { flushApiCalls } from "@/lib/api/metering";
import { closeDb, getDb } from "@/lib/db";
import { releaseOwnerLock } from "@/lib/db/owner-lock";
import { readEnv } from "@/lib/env";
import { getGalleryManager } from "@/lib/galleries/gallery-manager";
import { BullJobQueue } from "@/lib/jobs/bullmq-queue";
import { DeferredJobQueue, InProcessJobQueue, resumePendingJobs, setJobQueue } from "@/lib/jobs/job-queue";
import { shutdownEngine } from "@/lib/engine";
import { sweepIdempotencyKeys } from "@/lib/api/idempotency";
import { logError, logInfo } from "@/lib/log";
import { startOpsServer } from "@/lib/ops/ops-server";
import { registerServerGauges } from "@/lib/server/server-gauges";
import { serverPetViewCache } from "@/lib/pets/pet-view-cache";
import { startOrphanSweeps } from "@/lib/storage/orphan-sweep";
import { processWide } from "@/lib/process-state";
import { startWebhookDispatcher, stopWebhookDispatcher } from "@/lib/webhooks/dispatcher";

/** Idempotency keys past their 24 hours are forgotten once an hour. */
const IDEMPOTENCY_SWEEP_MS = 3600_000;

/**
 * Server start-up (called from instrumentation.ts): open the database (migrations, default plans),
 * start the job queue and resume what a crash left PENDING (and, when this process runs jobs, load its 1:N galleries
 * in the background and send the webhook deliveries due), remove image files a crash orphaned,
 * open the loopback ops port, and close it all on SIGTERM/SIGINT.
 */
export function startServer(): Promise<void> {
  return processWide("serverStart", async () => {
    const env = readEnv();
    // Without NEXTAUTH_URL next-auth would build every URL and cookie on localhost:3000: it takes the
    // request's host instead (the door drops forwarded host and protocol headers of untrusted clients).
    if (!process.env.NEXTAUTH_URL) process.env.AUTH_TRUST_HOST = "true";
    const db = await getDb();
    await ensureDefaultPlans(db);
    // The caches listen from start-up: until a process has listened for a whole lease, its barriers
    // (the API's writes) wait the lease out (lib/db/notifications.ts).
    serverApiKeyCache();
    serverPetViewCache();
    // With REDIS_URL the web process only enqueues; `npm run worker` processes run and reconcile jobs.
    const runsJobs = env.JOB_RUNNER === "embedded" && !env.REDIS_URL;
    const queue = env.REDIS_URL ? new BullJobQueue(env) : runsJobs ? new InProcessJobQueue(db) : new DeferredJobQueue();
    setJobQueue(queue);
    if (runsJobs) {
      await resumePendingJobs(db, queue);
      // Webhook deliveries are sent wherever jobs run (the outbox is written as each job ends).
      startWebhookDispatcher(db, env);
      // The 1:N galleries load in the background, ahead of the first identification (never awaited here).
      void getGalleryManager(db).preload();
    }
    registerServerGauges(db);
    const stopSweeps = await startOrphanSweeps(db, !env.DATABASE_URL);
    const idempotencySweeps = setInterval(() => void sweepIdempotencyKeys(db).catch((error) => logError("idempotency-sweep-failed", error)), IDEMPOTENCY_SWEEP_MS);
    idempotencySweeps.unref();
    const ops = env.DATABASE_URL ? null : await startOpsServer(env, db);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logInfo("server-stopping", { signal });
      try {
        ops?.close();
        stopSweeps();
        clearInterval(idempotencySweeps);
        await queue.close();
        await stopWebhookDispatcher();
        await shutdownEngine();
        await flushApiCalls();
        await closeDb();
      } catch (error) {
        logError("server-stop-failed", error);
      }
      process.exit(0);
    };
    // Next's own handlers exit at once; `npm start` sets NEXT_MANUAL_SIG_HANDLE so that these run.
    process.once("SIGTERM", () => void stop("SIGTERM"));
    process.once("SIGINT", () => void stop("SIGINT"));
    // Whatever else ends the process, do not leave a lock naming it.
    process.once("exit", () => releaseOwnerLock(env));
    logInfo("server-started", {
      mode: env.DATABASE_URL ? "postgres" : "pglite",
      jobs: env.REDIS_URL ? "bullmq" : runsJobs ? "embedded" : "none",
      storage: env.STORAGE_URL ? "s3" : "disk",
      dataDir: env.dataDir,
    });
  });
}

/**
 * Next would go on listening with every request failing; a server that cannot own its database
 * (another server holds DATA_DIR, PostgreSQL unreachable, a migration failed) stops instead.
 */
export async function startServerOrExit(): Promise<void> {
  try {
    await startServer();
  } catch (error) {
    console.error("rhinarium: start-up failed:", error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
