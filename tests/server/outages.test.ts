import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, imageFilesOnDisk, type Answer } from "@/lab/test-support/api";
import { appearanceJpeg, noseCapture, prng } from "@/lab/test-support/nose-images";
import { createTestDatabase, deleteRedisKeys, ensureRedis, REDIS_URL, startWorker, testQueuePrefix, type TestDatabase, type WorkerProcess } from "@/lab/test-support/scale";
import { adminSql, buildOnce, ops, startServer, type TestServer } from "@/lab/test-support/server";
import { startTcpProxy } from "@/lab/test-support/tcp-proxy";

// Faults in the Redis mode: outages of Redis and of the database, and workers SIGKILLed under load.
// The machine's Redis and PostgreSQL are shared with other sessions, so nothing is stopped: TCP
// proxies stand between the processes and the services and are cut. The web process and both workers
// reach Redis through one proxy; the workers (only) reach PostgreSQL through another, so that the
// database can vanish under a running job while the API keeps answering.

const WORKER_KILLS = Number(process.env.FAULT_WORKER_KILLS ?? 3);

type Proxy = Awaited<ReturnType<typeof startTcpProxy>>;

let database: TestDatabase;
let redisProxy: Proxy;
let pgProxy: Proxy;
let server: TestServer;
let prefix: string;
const workers: WorkerProcess[] = [];
let workerEnv: NodeJS.ProcessEnv;
let api: ReturnType<typeof apiCaller>;
let enrolled: string;
/** Every answer the API gave in this file: none may be a 5xx other than 503. */
const answers: Answer[] = [];

function viaProxy(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.toString();
}

async function call(method: string, urlPath: string, json?: unknown): Promise<Answer> {
  const answer = await api.call(method, urlPath, json);
  answers.push(answer);
  return answer;
}

/** A finished capture session of `seed`'s photos (5 nose images for a registration, 3 to verify). */
async function filledSession(purpose: "PET_PROFILE_REGISTRATION" | "PET_VERIFICATION", petId: string, seed: number): Promise<string> {
  const session = await api.createSession(purpose, petId);
  const captures = purpose === "PET_PROFILE_REGISTRATION" ? [0, 1, 2, 3, 4] : [5, 6, 7];
  for (const i of captures) expect((await api.upload("fingerprints", session, await noseCapture(seed, i))).status).toBe(201);
  expect((await api.upload("appearances", session, await appearanceJpeg(seed))).status).toBe(201);
  return session;
}

const workerLogs = () => workers.map((w) => w.log()).join("\n");

beforeAll(async () => {
  await buildOnce();
  await ensureRedis();
  database = await createTestDatabase("outages");
  prefix = testQueuePrefix();
  redisProxy = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379), new URL(REDIS_URL).hostname);
  const pg = new URL(database.url);
  pgProxy = await startTcpProxy(Number(pg.port || 5432), pg.hostname);
  const shared = {
    REDIS_URL: viaProxy(REDIS_URL, redisProxy.port),
    JOB_QUEUE_PREFIX: prefix,
    JOB_RECONCILE_MS: "1000",
    // A SIGKILLed worker's job goes to the other worker 3 s later (the default 30 s would dominate the test).
    JOB_LOCK_MS: "3000",
    LOG_LEVEL: "info",
  };
  server = await startServer({ databaseUrl: database.url, env: { ...shared, API_RATE_LIMIT_BURST: "10000" } });
  // The workers share the web process's data folder for images (the disk store); PostgreSQL mode takes no owner lock.
  workerEnv = { ...process.env, ...shared, DATABASE_URL: viaProxy(database.url, pgProxy.port), DATA_DIR: server.dataDir, ENGINE_WORKERS: "1" };
  for (let i = 0; i < 2; i++) workers.push(startWorker(workerEnv));
  await Promise.all(workers.map((w) => w.waitForLog((line) => line.event === "worker-started")));
  const key = (await ops(server.env, "account:create", "--name", "Outage clinic", "--plan", "standard")).apiKey as string;
  api = apiCaller(() => server.baseUrl, key);
  enrolled = await api.createPet();
  const session = await filledSession("PET_PROFILE_REGISTRATION", enrolled, 41);
  const started = await call("POST", `/v2/pets/${enrolled}:addFingerprints`, { sessionId: session });
  expect(await api.pollJob("fingerprint-addition-jobs", started.body!.data!.jobId!)).toBe("SUCCESS");
}, 600_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill("SIGTERM")));
  await server?.stop();
  await redisProxy?.close();
  await pgProxy?.close();
  if (prefix) await deleteRedisKeys(prefix);
  await database?.drop();
  if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
});

describe("Redis outage (REDIS_URL mode: a proxy between every process and Redis is cut)", () => {
  for (const how of ["refuse", "blackhole"] as const) {
    it(`accepts starts (202, enqueued by the reconciler later), keeps reads working, and ends every job once Redis returns (${how})`, async () => {
      const pet = await api.createPet();
      const registration = await filledSession("PET_PROFILE_REGISTRATION", pet, 42);
      const verification = await filledSession("PET_VERIFICATION", enrolled, 41);
      redisProxy.cut(how);

      // Starts are accepted: the job row is committed PENDING; the enqueue fails in the background.
      const added = await call("POST", `/v2/pets/${pet}:addFingerprints`, { sessionId: registration });
      const verify = await call("POST", `/v2/pets/${enrolled}:verify`, { sessionId: verification });
      expect([added.status, verify.status]).toEqual([202, 202]);
      const jobs = [
        ["fingerprint-addition-jobs", added.body!.data!.jobId!],
        ["verification-jobs", verify.body!.data!.jobId!],
      ] as const;
      // Reads and the other writes never touch Redis.
      expect((await call("GET", "/v2/pets")).status).toBe(200);
      expect((await call("GET", `/v2/pets/${enrolled}`)).status).toBe(200);
      expect((await call("POST", "/v2/pets", { species: "CAT" })).status).toBe(201);
      for (const [kind, jobId] of jobs) {
        const job = await call("GET", `/v2/${kind}/${jobId}`);
        expect([job.status, job.body?.data?.status]).toEqual([200, "PENDING"]);
      }
      // Long enough for the web process's enqueue to give up and the workers' connections to fail.
      await new Promise((r) => setTimeout(r, 5000));
      redisProxy.restore();

      // Nobody restarts anything: the workers reconnect, the reconciler enqueues, the jobs end.
      for (const [kind, jobId] of jobs) expect(await api.pollJob(kind, jobId, 120_000), kind).toBe("SUCCESS");
      for (const worker of workers) expect(worker.exited(), `worker ${worker.pid} exited`).toBe(false);
      expect(answers.filter((a) => a.status >= 500)).toEqual([]);
      expect(server.log()).not.toMatch(/api-unhandled-error|uncaughtException|unhandledRejection/);
      expect(workerLogs()).not.toMatch(/uncaughtException|unhandledRejection/);
    }, 240_000);
  }
});

describe("PostgreSQL outage under a worker (the workers' proxy to the database is cut)", () => {
  it("keeps the job PENDING and retryable (no BullMQ attempt spent, never FAILED) and finishes it once the database returns", async () => {
    const verification = await filledSession("PET_VERIFICATION", enrolled, 41);
    pgProxy.cut("refuse");
    const started = await call("POST", `/v2/pets/${enrolled}:verify`, { sessionId: verification });
    expect(started.status).toBe(202);
    const jobId = started.body!.data!.jobId!;
    // A worker takes the job, cannot reach the database, and puts it back to wait.
    const waiting = `"event":"job-waiting-for-database","jobId":"${jobId}"`;
    for (const deadline = Date.now() + 60_000; !workerLogs().includes(waiting); ) {
      if (Date.now() > deadline) throw new Error(`no worker put job ${jobId} back to wait:\n${workerLogs()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Past BullMQ's own attempts (1 s + 2 s backoff): before, the job would have been failed (QUEUE_FAILED).
    await new Promise((r) => setTimeout(r, 5000));
    const during = await call("GET", `/v2/verification-jobs/${jobId}`);
    expect([during.status, during.body?.data?.status]).toEqual([200, "PENDING"]);
    pgProxy.restore();

    expect(await api.pollJob("verification-jobs", jobId, 120_000)).toBe("SUCCESS");
    expect(workerLogs()).not.toMatch(/QUEUE_FAILED|job-abandon-failed|uncaughtException|unhandledRejection/);
    for (const worker of workers) expect(worker.exited(), `worker ${worker.pid} exited`).toBe(false);
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
  }, 240_000);
});

interface Ledger {
  pets: Set<string>;
  images: Set<string>;
  jobs: Map<string, string>; // job id -> the route that polls it
}

/** Registrations of new pets and verifications of the enrolled one, one after another until `stop`. */
async function jobLoad(fx: { noses: Buffer[]; probes: Buffer[]; appearance: Buffer }, ledger: Ledger, first: number, stop: () => boolean) {
  for (let n = first; !stop(); n++) {
    const registering = n % 2 === 0;
    const petId = registering ? await api.createPet() : enrolled;
    if (registering) ledger.pets.add(petId);
    const session = await api.createSession(registering ? "PET_PROFILE_REGISTRATION" : "PET_VERIFICATION", petId);
    for (const [i, bytes] of [...(registering ? fx.noses : fx.probes), fx.appearance].entries()) {
      const up = await api.upload(i === (registering ? fx.noses : fx.probes).length ? "appearances" : "fingerprints", session, bytes);
      answers.push(up);
      expect(up.status).toBe(201);
      ledger.images.add(up.body!.data!.id!);
    }
    const started = await call("POST", `/v2/pets/${petId}:${registering ? "addFingerprints" : "verify"}`, { sessionId: session });
    expect(started.status).toBe(202);
    ledger.jobs.set(started.body!.data!.jobId!, registering ? "fingerprint-addition-jobs" : "verification-jobs");
  }
}

describe("workers SIGKILLed at random points under load (two workers, each replaced after its kill)", () => {
  it(`ends every acknowledged job and loses no write through ${WORKER_KILLS} worker SIGKILLs`, async () => {
    const fx = {
      noses: await Promise.all([0, 1, 2, 3, 4].map((i) => noseCapture(43, i))),
      probes: await Promise.all([5, 6, 7].map((i) => noseCapture(41, i))),
      appearance: await appearanceJpeg(41),
    };
    const ledger: Ledger = { pets: new Set(), images: new Set(), jobs: new Map() };
    // Seeded, so that a failing kill schedule can be replayed (FAULT_SEED).
    const random = prng(Number(process.env.FAULT_SEED ?? 7));
    let stopped = false;
    const load = [0, 1, 2].map((first) => jobLoad(fx, ledger, first, () => stopped));
    for (let k = 0; k < WORKER_KILLS; k++) {
      // The victim is a worker that has started a job since the last kill (jobs are flowing), killed a
      // random 0-1.5 s after that start: mid-job or between jobs, as it falls.
      const since = workers.map((w) => w.log().length);
      let victim: WorkerProcess | undefined;
      for (let waited = 0; !victim && waited < 120_000; waited += 50) {
        victim = workers.find((w, i) => w.log().slice(since[i]).includes('"event":"job-started"'));
        if (!victim) await new Promise((r) => setTimeout(r, 50));
      }
      expect(victim, "no worker started a job in 2 minutes").toBeDefined();
      await new Promise((r) => setTimeout(r, random() * 1500));
      await victim!.kill("SIGKILL");
      const replacement = startWorker(workerEnv);
      workers.splice(workers.indexOf(victim!), 1, replacement);
      await replacement.waitForLog((line) => line.event === "worker-started");
    }
    stopped = true;
    await Promise.all(load);

    const outcomes: Record<string, number> = {};
    for (const [jobId, kind] of ledger.jobs) {
      const status = await api.pollJob(kind, jobId, 180_000);
      outcomes[status] = (outcomes[status] ?? 0) + 1;
    }
    expect(outcomes.PENDING).toBeUndefined();
    for (const pet of ledger.pets) expect((await call("GET", `/v2/pets/${pet}`)).status, pet).toBe(200);
    const rows = (await adminSql(
      `SELECT id, "filePath" FROM "FingerprintImage" UNION ALL SELECT id, "filePath" FROM "AppearanceImage"`,
      database.url,
    )) as { id: string; filePath: string }[];
    const lost = [...ledger.images].filter((id) => !rows.some((r) => r.id === id));
    expect(lost).toEqual([]);
    const stuck = await adminSql(`SELECT id FROM "Job" WHERE status = 'PENDING' UNION ALL SELECT id FROM "Pet" WHERE "activeAdditionJobId" IS NOT NULL`, database.url);
    expect(stuck).toEqual([]);
    // A file for every row, a row for every file.
    expect(imageFilesOnDisk(server.dataDir).sort()).toEqual(rows.map((r) => r.filePath).sort());
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const rerun = (await adminSql(`SELECT count(*)::int AS n FROM "Job" WHERE attempts > 1`, database.url)) as { n: number }[];
    console.log(
      `[faults redis workers] ${WORKER_KILLS} worker SIGKILLs, ${answers.length} requests answered in this file, ${ledger.pets.size} pets, ${ledger.images.size} images and ${ledger.jobs.size} jobs acknowledged, jobs ${JSON.stringify(outcomes)} (${rerun[0].n} run again after a kill), 5xx 0, lost ${lost.length}`,
    );
  }, 600_000);
});
