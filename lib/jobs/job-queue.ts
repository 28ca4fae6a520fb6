import type { Db } from "@/lib/db/connect";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { logError, logInfo } from "@/lib/log";
import { runJob } from "./run-job";
import { processSlot } from "@/lib/process-state";
import { wakeWebhookDispatcher } from "@/lib/webhooks/dispatcher";
import { recordJobEnd } from "@/lib/webhooks/events";

/**
 * Where started jobs go. The embedded mode runs them in this process; with REDIS_URL the BullMQ
 * queue (bullmq-queue.ts) implements the same two calls and runs the same `runJob` in worker processes.
 */
export interface JobQueue {
  enqueue(jobId: string): void;
  /** Waits for running jobs to finish; queued ones stay PENDING and are resumed at the next start. */
  close(): Promise<void>;
}

/** A job that kept a process from finishing it this many times is failed rather than retried. */
export const MAX_JOB_ATTEMPTS = 3;

/** Backoff for a job the database outage interrupted: 1 s doubling to 30 s, until the database is back. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

/** The wait before the `count`-th run (from 1) of a job a database outage interrupted. */
export function databaseRetryDelayMs(count: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (count - 1));
}

export class InProcessJobQueue implements JobQueue {
  private readonly waiting: string[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly retries = new Map<string, { count: number; timer: NodeJS.Timeout }>();
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly concurrency = 2,
  ) {}

  enqueue(jobId: string): void {
    if (this.closed) return;
    this.waiting.push(jobId);
    this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiting.length = 0;
    for (const { timer } of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
    await Promise.allSettled([...this.running]);
  }

  /** The job stays PENDING in the database; this process runs it again after a backoff. */
  private retryLater(jobId: string, error: unknown): void {
    if (this.closed) return;
    const count = (this.retries.get(jobId)?.count ?? 0) + 1;
    const delay = databaseRetryDelayMs(count);
    logError("job-waiting-for-database", error, { jobId, retryInMs: delay });
    const timer = setTimeout(() => this.enqueue(jobId), delay);
    timer.unref();
    this.retries.set(jobId, { count, timer });
  }

  private forgetRetry(jobId: string): void {
    this.retries.delete(jobId);
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.concurrency && this.waiting.length > 0) {
      const jobId = this.waiting.shift()!;
      const run = runJob(this.db, jobId)
        .then(() => this.forgetRetry(jobId))
        .catch((error) => {
          if (isDatabaseUnavailable(error)) this.retryLater(jobId, error);
          else logError("job-run-failed", error, { jobId });
        })
        .finally(() => {
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }
}

/**
 * Jobs a crash or restart left PENDING: each is resumed, unless it has already been attempted
 * MAX_JOB_ATTEMPTS times (it may be what crashes the process), in which case it fails.
 */
export async function resumePendingJobs(db: Db, queue: JobQueue): Promise<{ resumed: number; failed: number }> {
  const pending = await db.job.findMany({ where: { status: "PENDING" }, orderBy: { createdAt: "asc" }, select: { id: true, attempts: true } });
  let failed = 0;
  for (const job of pending) {
    if (job.attempts >= MAX_JOB_ATTEMPTS) {
      await abandonJob(db, job.id);
      failed++;
    } else {
      queue.enqueue(job.id);
    }
  }
  if (pending.length > 0) logInfo("jobs-resumed", { resumed: pending.length - failed, failed });
  return { resumed: pending.length - failed, failed };
}

/** Fails a job that is still PENDING, with the reason kept for support, and frees its pet. */
export async function abandonJob(
  db: Db,
  jobId: string,
  reason: { code: string; message: string } = { code: "ABANDONED", message: `interrupted ${MAX_JOB_ATTEMPTS} times` },
): Promise<void> {
  const deliveries = await db.$transaction(async (tx) => {
    const { count } = await tx.job.updateMany({ where: { id: jobId, status: "PENDING" }, data: { status: "FAILED", finishedAt: new Date(), failureReason: reason } });
    await tx.pet.updateMany({ where: { activeAdditionJobId: jobId }, data: { activeAdditionJobId: null } });
    if (count === 0) return 0;
    // As every job end: the account's webhook endpoints are told in this transaction.
    const job = await tx.job.findUniqueOrThrow({ where: { id: jobId }, select: { id: true, accountId: true, kind: true } });
    return recordJobEnd(tx, job);
  });
  if (deliveries > 0) wakeWebhookDispatcher();
}

/**
 * What a queue worker does with a job it is handed, which may be a redelivery after a worker died
 * mid-job: run it, unless it has already been started MAX_JOB_ATTEMPTS times (it may be what kills
 * workers), in which case it fails. A run that a database outage interrupted counted as a start too, but
 * it was not the job's fault: each of the `databaseInterruptions` the queue recorded allows one more.
 */
export async function runJobUnlessAbandoned(db: Db, jobId: string, databaseInterruptions = 0): Promise<"ran" | "abandoned" | "gone"> {
  const job = await db.job.findUnique({ where: { id: jobId }, select: { status: true, attempts: true } });
  if (!job || job.status !== "PENDING") return "gone";
  if (job.attempts >= MAX_JOB_ATTEMPTS + databaseInterruptions) {
    await abandonJob(db, jobId);
    return "abandoned";
  }
  await runJob(db, jobId);
  return "ran";
}

/** Leaves started jobs PENDING for a runner in another process (or the next start) to take. */
export class DeferredJobQueue implements JobQueue {
  enqueue(): void {}
  async close(): Promise<void> {}
}

// One queue per process, set by the server's start-up (lib/server/start.ts).
const current = processSlot<JobQueue>("jobQueue");

export function setJobQueue(queue: JobQueue | undefined): void {
  current.set(queue);
}

export function getJobQueue(): JobQueue {
  const queue = current.get();
  if (!queue) throw new Error("job queue not started");
  return queue;
}
