import { openOwnedDatabase } from "@/lib/db";
import { readEnv } from "@/lib/env";
import { logError, logInfo } from "@/lib/log";
import { getGalleryManager } from "@/lib/galleries/gallery-manager";
import { startJobWorker } from "./bullmq-queue";
import { shutdownEngine } from "@/lib/engine";
import { startWebhookDispatcher, stopWebhookDispatcher } from "@/lib/webhooks/dispatcher";

/**
 * `npm run worker`: a job worker process. Run any number, on any machine that reaches the same
 * PostgreSQL (DATABASE_URL), Redis (REDIS_URL) and images (STORAGE_URL, or a shared DATA_DIR).
 * SIGTERM/SIGINT let running jobs finish before it exits.
 */
export async function runWorkerProcess(): Promise<void> {
  const env = readEnv();
  if (!env.REDIS_URL || !env.DATABASE_URL) {
    console.error("rhinarium worker: needs REDIS_URL and DATABASE_URL (the embedded mode runs jobs in the web process)");
    process.exit(1);
  }
  // PostgreSQL mode takes no owner lock; migrations are applied under Prisma's advisory lock.
  const db = await openOwnedDatabase(env, "server");
  const worker = startJobWorker(db.prisma, env);
  // Webhook deliveries are sent wherever jobs run; workers share the outbox (claims skip each other's rows).
  startWebhookDispatcher(db.prisma, env);
  logInfo("worker-started", { pid: process.pid });
  // The 1:N galleries load in the background, ahead of the first identification this worker is handed.
  void getGalleryManager(db.prisma).preload();
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logInfo("worker-stopping", { signal, pid: process.pid });
    try {
      await worker.close();
      await stopWebhookDispatcher();
      await shutdownEngine();
      await db.close();
    } catch (error) {
      logError("worker-stop-failed", error);
    }
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}
