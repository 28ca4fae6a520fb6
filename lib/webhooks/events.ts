import type { Db } from "@/lib/db/connect";
import { newCuid } from "@/lib/db/ids";
import type { JobKind, Prisma } from "@/lib/generated/prisma/client";
import { viewJob } from "@/lib/jobs/job-views";

// The events an account's endpoints are told, and the outbox rows that carry them. A job's end is written to
// the outbox in the transaction that records it (lib/jobs/run-job.ts, job-queue.ts): once the job is SUCCESS
// or FAILED, its deliveries exist, whatever happens to the process next. The body is fixed when the event
// happens, so every attempt sends (and signs) the same bytes.

type Tx = Prisma.TransactionClient | Db;

export const JOB_EVENT_TYPES = ["job.succeeded", "job.failed"] as const;
export const TEST_EVENT_TYPE = "webhook.test";

/** The API's resource path of a job, by kind: where its state is polled (polling stays the contract). */
const JOB_PATHS: Record<JobKind, string> = {
  FINGERPRINT_ADDITION: "/v2/fingerprint-addition-jobs/",
  VERIFICATION: "/v2/verification-jobs/",
  IDENTIFICATION: "/v2/identification-jobs/",
};

/** A Standard Webhooks message id: one per event, the same for each endpoint and every attempt. */
function newEventId(): string {
  return `msg_${newCuid()}`;
}

async function enabledEndpoints(tx: Tx, accountId: string, only?: string): Promise<string[]> {
  const rows = await tx.webhookEndpoint.findMany({ where: { accountId, enabled: true, ...(only ? { id: only } : {}) }, select: { id: true } });
  return rows.map((r) => r.id);
}

/**
 * A job has just ended (SUCCESS or FAILED, in this transaction): one delivery per enabled endpoint of its
 * account, with the job's view as GET answers it now. Returns how many were written.
 */
export async function recordJobEnd(tx: Tx, job: { id: string; accountId: string; kind: JobKind }): Promise<number> {
  const endpoints = await enabledEndpoints(tx, job.accountId);
  if (endpoints.length === 0) return 0;
  const row = await tx.job.findFirstOrThrow({ where: { id: job.id, accountId: job.accountId }, select: { status: true, createdAt: true, finishedAt: true } });
  if (row.status === "PENDING") throw new Error(`job ${job.id} has not ended`);
  const view = await viewJob(tx, job.accountId, job.id, job.kind);
  const finishedAt = (row.finishedAt ?? new Date()).toISOString();
  const type = row.status === "SUCCESS" ? "job.succeeded" : "job.failed";
  const payload = JSON.stringify({
    type,
    timestamp: finishedAt,
    data: {
      jobId: job.id,
      kind: job.kind,
      status: row.status,
      path: `${JOB_PATHS[job.kind]}${job.id}`,
      createdAt: row.createdAt.toISOString(),
      finishedAt,
      view,
    },
  });
  const eventId = newEventId();
  await tx.webhookDelivery.createMany({
    data: endpoints.map((endpointId) => ({ accountId: job.accountId, endpointId, eventId, eventType: type, jobId: job.id, payload })),
  });
  return endpoints.length;
}

/** The owner's "send a test event": one delivery to that endpoint alone. False when it is not theirs or disabled. */
export async function recordTestEvent(db: Tx, accountId: string, endpointId: string, now = new Date()): Promise<boolean> {
  const [endpoint] = await enabledEndpoints(db, accountId, endpointId);
  if (!endpoint) return false;
  const payload = JSON.stringify({ type: TEST_EVENT_TYPE, timestamp: now.toISOString(), data: { endpointId } });
  await db.webhookDelivery.create({ data: { accountId, endpointId, eventId: newEventId(), eventType: TEST_EVENT_TYPE, payload, nextAttemptAt: now } });
  return true;
}
