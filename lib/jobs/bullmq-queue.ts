import os from "node:os";
import { Redis } from "ioredis";
import { DelayedError, Queue, Worker, type ConnectionOptions, type JobsOptions } from "bullmq";
import type { Db } from "@/lib/db/connect";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import type { Env } from "@/lib/env";
import { logError, logInfo } from "@/lib/log";
import { MAX_JOB_ATTEMPTS, abandonJob, databaseRetryDelayMs, runJobUnlessAbandoned, type JobQueue } from "./job-queue";

// Jobs through BullMQ on Redis (REDIS_URL). The database row stays the truth (PENDING → SUCCESS |
// FAILED); the queue only says which process runs it. A BullMQ job's id is the database job's id,
// so enqueueing one job twice is harmless, and the same `runJob` runs it as in the embedded mode.
//
// A worker killed mid-job stops renewing the job's lock; after JOB_LOCK_MS another worker's stalled
// check hands the job out again, and the row's `attempts` decides between running it once more and
// failing it (runJobUnlessAbandoned). Whatever the queue still loses (an enqueue that never reached
// Redis, a job Redis failed) the reconciler finds among PENDING rows and re-enqueues or fails.

const QUEUE_NAME = "jobs";

interface JobPayload {
  jobId: string;
  /** Runs a database outage has interrupted so far (sets the next wait). */
  databaseRetries?: number;
}

function connectionOf(env: Env, worker: boolean): ConnectionOptions {
  const url = new URL(env.REDIS_URL!);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined,
    tls: url.protocol === "rediss:" ? {} : undefined,
    // A worker waits for Redis to come back (BullMQ requires it); an enqueue fails fast instead, and
    // the reconciler enqueues the PENDING job later.
    maxRetriesPerRequest: worker ? null : 3,
  };
}

const jobOptions = (jobId: string): JobsOptions => ({
  jobId,
  attempts: MAX_JOB_ATTEMPTS,
  backoff: { type: "exponential", delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600 },
});

/** The web process's side: it only enqueues. */
export class BullJobQueue implements JobQueue {
  private readonly queue: Queue<JobPayload>;

  constructor(env: Env) {
    this.queue = new Queue<JobPayload>(QUEUE_NAME, { connection: connectionOf(env, false), prefix: env.JOB_QUEUE_PREFIX });
    this.queue.on("error", (error) => logError("job-queue-error", error));
  }

  enqueue(jobId: string): void {
    // The row is committed PENDING before this; if Redis refuses, the reconciler enqueues it later.
    this.add(jobId).catch((error) => logError("job-enqueue-failed", error, { jobId }));
  }

  add(jobId: string): Promise<unknown> {
    return this.queue.add("run", { jobId }, jobOptions(jobId));
  }

  /** Whether the queue still holds this job to run (waiting, delayed, running). */
  async holds(jobId: string): Promise<boolean> {
    const state = await this.queue.getJobState(jobId);
    return state === "waiting" || state === "active" || state === "delayed" || state === "prioritized" || state === "waiting-children";
  }

  /** Drops a finished (failed or completed) queue entry so that the id can be enqueued again. */
  async forget(jobId: string): Promise<void> {
    await this.queue.remove(jobId).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

/**
 * PENDING rows the queue does not hold are enqueued again, or failed once attempted
 * MAX_JOB_ATTEMPTS times. Rows younger than `minAgeMs` are left to the process that started them.
 */
export async function reconcilePendingJobs(db: Db, queue: BullJobQueue, minAgeMs: number): Promise<{ enqueued: number; failed: number }> {
  const rows = await db.job.findMany({
    where: { status: "PENDING", createdAt: { lt: new Date(Date.now() - minAgeMs) } },
    select: { id: true, attempts: true },
    orderBy: { createdAt: "asc" },
    take: 1000,
  });
  let enqueued = 0;
  let failed = 0;
  for (const row of rows) {
    if (await queue.holds(row.id)) continue;
    if (row.attempts >= MAX_JOB_ATTEMPTS) {
      await abandonJob(db, row.id);
      failed++;
    } else {
      await queue.forget(row.id);
      await queue.add(row.id);
      enqueued++;
    }
  }
  if (enqueued + failed > 0) logInfo("jobs-reconciled", { enqueued, failed });
  return { enqueued, failed };
}

export interface JobWorker {
  close(): Promise<void>;
}

/**
 * A worker process's side: runs jobs from the queue (as many at once as the engine has threads) and
 * reconciles the queue with the database at start and every JOB_RECONCILE_MS.
 */
export function startJobWorker(db: Db, env: Env): JobWorker {
  const queue = new BullJobQueue(env);
  const concurrency = Number(process.env.ENGINE_WORKERS) || os.availableParallelism();
  const worker = new Worker<JobPayload>(
    QUEUE_NAME,
    async (job, token) => {
      logInfo("job-started", { jobId: job.data.jobId, pid: process.pid });
      try {
        const outcome = await runJobUnlessAbandoned(db, job.data.jobId, job.data.databaseRetries ?? 0);
        logInfo("job-finished", { jobId: job.data.jobId, pid: process.pid, outcome });
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
        // Not the job's fault: it waits (delayed, no BullMQ attempt spent, the row still PENDING)
        // and runs again once the database is back, as the embedded queue's retry does.
        const retries = (job.data.databaseRetries ?? 0) + 1;
        const delay = databaseRetryDelayMs(retries);
        logError("job-waiting-for-database", error, { jobId: job.data.jobId, pid: process.pid, retryInMs: delay });
        await job.updateData({ ...job.data, databaseRetries: retries });
        await job.moveToDelayed(Date.now() + delay, token);
        throw new DelayedError();
      }
    },
    {
      connection: connectionOf(env, true),
      prefix: env.JOB_QUEUE_PREFIX,
      concurrency,
      lockDuration: env.JOB_LOCK_MS,
      stalledInterval: env.JOB_LOCK_MS,
      // Redeliveries are bounded by the row's attempts, not by BullMQ's own count.
      maxStalledCount: MAX_JOB_ATTEMPTS,
    },
  );
  worker.on("error", (error) => logError("job-worker-error", error));
  worker.on("failed", (job, error) => {
    // The processor threw something other than a database outage on its last attempt: the row must not stay PENDING.
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    abandonJob(db, job.data.jobId, { code: "QUEUE_FAILED", message: error.message }).catch((e) =>
      logError("job-abandon-failed", e, { jobId: job.data.jobId }),
    );
  });

  // One worker reconciles per period: the first to set this key, which expires with the period.
  const redis = new Redis(env.REDIS_URL!, { maxRetriesPerRequest: 3 });
  redis.on("error", (error) => logError("job-reconcile-redis-error", error));
  const reconcileKey = `${env.JOB_QUEUE_PREFIX}:${QUEUE_NAME}:reconcile`;
  const reconcile = async () => {
    try {
      const claimed = (await redis.set(reconcileKey, String(process.pid), "PX", env.JOB_RECONCILE_MS, "NX")) === "OK";
      if (claimed) await reconcilePendingJobs(db, queue, env.JOB_RECONCILE_MS);
    } catch (error) {
      logError("job-reconcile-failed", error);
    }
  };
  void reconcile();
  const timer = setInterval(() => void reconcile(), env.JOB_RECONCILE_MS);

  return {
    async close() {
      clearInterval(timer);
      // Waits for running jobs; a job cut off anyway is redelivered by the stalled check.
      await worker.close();
      await queue.close();
      redis.disconnect();
    },
  };
}
