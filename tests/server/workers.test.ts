import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RhinariumClient } from "@rhinarium/sdk";
import { openDatabase, type OpenDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { startMoto, type MotoServer } from "@/lab/test-support/moto";
import {
  apiClient,
  createTestDatabase,
  deleteRedisKeys,
  ensureRedis,
  probeSession,
  REDIS_URL,
  registerPet,
  startWorker,
  testQueuePrefix,
  type TestDatabase,
  type WorkerProcess,
} from "@/lab/test-support/scale";
import { buildOnce, ops, startServer, type TestServer } from "@/lab/test-support/server";
import { MAX_JOB_ATTEMPTS } from "@/lib/jobs/job-queue";

// The scaled-out mode for real: PostgreSQL, BullMQ on Redis, images in an S3-compatible store (moto),
// a web process that only enqueues, and two `npm run worker` processes (one SIGKILLed mid-job), each
// with a data folder of its own, so that nothing but the database, Redis and S3 is shared.

const BUCKET = "rhinarium-scale-workers";
let database: TestDatabase;
let moto: MotoServer;
let server: TestServer;
let db: OpenDatabase;
let client: RhinariumClient;
let accountId: string;
let prefix: string;
const workers: WorkerProcess[] = [];
const folders: string[] = [];
let rex: string;
let max: string;

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-scale-workers-"));
  folders.push(dir);
  return dir;
}

beforeAll(async () => {
  await buildOnce();
  await ensureRedis();
  database = await createTestDatabase("workers");
  moto = await startMoto();
  await moto.createBucket(BUCKET);
  prefix = testQueuePrefix();
  const shared = {
    ...moto.env,
    DATABASE_URL: database.url,
    REDIS_URL,
    JOB_QUEUE_PREFIX: prefix,
    STORAGE_URL: moto.storageUrl(BUCKET),
    JOB_LOCK_MS: "2000",
    JOB_RECONCILE_MS: "1000",
  };
  server = await startServer({ databaseUrl: database.url, env: shared });
  for (let i = 0; i < 2; i++) {
    workers.push(startWorker({ ...process.env, ...shared, DATA_DIR: tempDir(), ENGINE_WORKERS: "1", LOG_LEVEL: "info" }));
  }
  await Promise.all(workers.map((w) => w.waitForLog((line) => line.event === "worker-started")));
  const account = await ops(server.env, "account:create", "--name", "Worker clinic", "--plan", "standard");
  accountId = account.accountId as string;
  client = apiClient(server.baseUrl, account.apiKey as string);
  db = await openDatabase(readEnv({ DATABASE_URL: database.url, DATA_DIR: tempDir() } as unknown as NodeJS.ProcessEnv));
}, 600_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill("SIGTERM")));
  await server?.stop();
  await db?.close();
  await moto?.stop();
  if (prefix) await deleteRedisKeys(prefix);
  await database?.drop();
  if (server) folders.push(server.dataDir);
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
});

const finishedBy = (jobId: string) => workers.filter((w) => w.log().includes(`"event":"job-finished","jobId":"${jobId}"`));

describe("jobs through BullMQ and worker processes", () => {
  it("runs registrations and identification in the workers, with images in S3 and nothing on the web's disk", async () => {
    // 30 enrolled images: the verification below is then slow enough (30 × 30 pairs) to be cut off mid-job.
    rex = await registerPet(client, 601, Array.from({ length: 30 }, (_, i) => i));
    max = await registerPet(client, 602);
    const session = await probeSession(client, 601, "PET_IDENTIFICATION");
    const { jobId } = await client.identifyPet(session);
    const job = await client.waitForIdentification(jobId);
    expect(job.status).toBe("SUCCESS");
    expect(job.status === "SUCCESS" && job.pets?.map((p) => p.id)).toEqual([rex]);
    expect(finishedBy(jobId)).toHaveLength(1);
    const jobs = await db.prisma.job.findMany({ where: { accountId }, select: { id: true, status: true } });
    expect(jobs.every((j) => j.status === "SUCCESS" && finishedBy(j.id).length === 1)).toBe(true);
    expect(max).not.toBe(rex);

    const s3 = new S3Client({
      endpoint: moto.endpoint,
      region: moto.env.AWS_REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: moto.env.AWS_ACCESS_KEY_ID, secretAccessKey: moto.env.AWS_SECRET_ACCESS_KEY },
    });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    s3.destroy();
    const images = (await db.prisma.fingerprintImage.count()) + (await db.prisma.appearanceImage.count());
    expect(listed.KeyCount).toBe(images);
    expect(fs.existsSync(path.join(server.dataDir, "images"))).toBe(false);
  });

  it("finishes a job whose worker was SIGKILLed mid-job in the other worker", async () => {
    const session = await probeSession(client, 601, "PET_VERIFICATION", rex, Array.from({ length: 30 }, (_, i) => 30 + i));
    const { jobId } = await client.verifyPet(rex, session);
    const started = await Promise.race(
      workers.map((worker) => worker.waitForLog((line) => line.event === "job-started" && line.jobId === jobId).then(() => worker)),
    );
    // Killed once its run has begun (attempt recorded), while the job is still PENDING.
    let row = await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    while (row.attempts === 0) row = await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    await started.kill("SIGKILL");
    expect(row.status).toBe("PENDING");
    expect((await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe("PENDING");
    const job = await client.waitForVerification(jobId);
    expect(job).toMatchObject({ status: "SUCCESS", isVerified: true });
    // Started twice: the killed worker's run never finished, the survivor's did.
    expect((await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).attempts).toBe(2);
    const survivor = workers.find((w) => w !== started)!;
    expect(finishedBy(jobId)).toEqual([survivor]);
  });

  it("runs a PENDING job the queue never got, and fails one already attempted too often", async () => {
    const sessions = [await probeSession(client, 602, "PET_VERIFICATION", max), await probeSession(client, 602, "PET_VERIFICATION", max)];
    await db.prisma.captureSession.updateMany({ where: { id: { in: sessions } }, data: { usedAt: new Date() } });
    // Rows written as a start call writes them, but never enqueued (a web process that died in between).
    const lost = await db.prisma.job.create({ data: { accountId, kind: "VERIFICATION", petId: max, sessionId: sessions[0] } });
    const doomed = await db.prisma.job.create({
      data: { accountId, kind: "VERIFICATION", petId: max, sessionId: sessions[1], attempts: MAX_JOB_ATTEMPTS },
    });
    const deadline = Date.now() + 60_000;
    let rows = await db.prisma.job.findMany({ where: { id: { in: [lost.id, doomed.id] } } });
    while (rows.some((r) => r.status === "PENDING") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      rows = await db.prisma.job.findMany({ where: { id: { in: [lost.id, doomed.id] } } });
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(lost.id)).toMatchObject({ status: "SUCCESS", attempts: 1, result: { isVerified: true } });
    expect(byId.get(doomed.id)).toMatchObject({ status: "FAILED", failureReason: { code: "ABANDONED" } });
  });
});
