import type { Species } from "@/lib/generated/prisma/enums";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { Redis } from "ioredis";
import { RhinariumClient } from "@rhinarium/sdk";
import { adminSql, ensurePostgres, PG_ADMIN_URL } from "./server";
import { appearanceJpeg, noseCapture } from "./nose-images";

// Helpers for the tests of the scaled-out modes (PostgreSQL, Redis workers): a database and a Redis
// key prefix of their own (named after this branch), worker processes, and pets enrolled through the API.

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(purpose: string): Promise<TestDatabase> {
  await ensurePostgres();
  const name = `rhinarium_scale_${purpose}_${randomBytes(4).toString("hex")}`;
  await adminSql(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => void (await adminSql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

/** Redis answers, or is started the way the stack notes say. */
export async function ensureRedis(): Promise<void> {
  if (await redisAvailable()) return;
  spawn("redis-server", ["--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379", "--save", "", "--appendonly", "no", "--dir", "/var/lib/redis", "--logfile", "/var/log/redis/ci.log"], { stdio: "ignore" });
  for (let i = 0; i < 20 && !(await redisAvailable()); i++) await new Promise((r) => setTimeout(r, 500));
  if (!(await redisAvailable())) throw new Error(`Redis does not answer at ${REDIS_URL}`);
}

async function redisAvailable(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export function testQueuePrefix(): string {
  return `rhinarium-scale-test-${randomBytes(4).toString("hex")}`;
}

/** Deletes every key under the prefix. */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

export interface WorkerProcess {
  pid: number;
  log(): string;
  /** Resolves with the first JSON log line that matches. */
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Whether the process has ended (by itself or killed). */
  exited(): boolean;
}

/** `npm run worker` as its own process. */
export function startWorker(env: NodeJS.ProcessEnv): WorkerProcess {
  const child: ChildProcess = spawn("node", [path.join(process.cwd(), "scripts", "worker.mjs")], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  let partial = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    output += chunk;
    partial += chunk;
    const complete = partial.split("\n");
    partial = complete.pop()!;
    for (const text of complete) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.match(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    pid: child.pid!,
    log: () => output,
    waitForLog(match, timeoutMs = 60_000) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`worker ${child.pid}: no such log line in ${timeoutMs} ms:\n${output}`)), timeoutMs);
        waiters.push({ match, resolve: (line) => (clearTimeout(timer), resolve(line)) });
      });
    },
    exited: () => child.exitCode !== null || child.signalCode !== null,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** A client that polls jobs often and long (tests and benchmarks wait for jobs, not a person). */
export function apiClient(baseUrl: string, apiKey: string, pollIntervalMs = 100): RhinariumClient {
  return new RhinariumClient({ baseUrl, apiKey, pollIntervalMs, maxPolls: 1_000_000, maxWaitMs: 120_000, retries: 0 });
}

/** A nose photo to upload, made or read when its turn comes. */
export type NosePhoto = () => Promise<Buffer>;

/** A pet registered through the API from synthetic pet `seed`'s `captures`; its id once the job succeeded. */
export async function registerPet(client: RhinariumClient, seed: number, captures = [0, 1, 2, 3, 4], species: Species = "DOG"): Promise<string> {
  return registerPetFrom(client, seed, captures.map((i) => () => noseCapture(seed, i)), species);
}

/** A pet registered through the API from these photos (its metadata and appearance image from `seed`); its id once the job succeeded. */
export async function registerPetFrom(client: RhinariumClient, seed: number, photos: NosePhoto[], species: Species = "DOG"): Promise<string> {
  const pet = await client.createPet({ species, metadata: JSON.stringify({ seed }) });
  const session = await client.createCaptureSession({ species, purpose: "PET_PROFILE_REGISTRATION", petId: pet.id });
  for (const photo of photos) await client.uploadFingerprint(session.id, await photo());
  await client.uploadAppearance(session.id, await appearanceJpeg(seed));
  const { jobId } = await client.addFingerprints(pet.id, session.id);
  const job = await client.waitForFingerprintAddition(jobId);
  if (job.status !== "SUCCESS") throw new Error(`registration of pet ${seed} ended ${job.status}`);
  return pet.id;
}

/** A finished capture session of new photos of pet `seed`, for verification (with petId) or identification. */
export async function probeSession(
  client: RhinariumClient,
  seed: number,
  purpose: "PET_VERIFICATION" | "PET_IDENTIFICATION",
  petId?: string,
  captures = [5, 6, 7],
): Promise<string> {
  return probeSessionFrom(client, seed, captures.map((i) => () => noseCapture(seed, i)), purpose, petId);
}

/** A finished capture session of these photos (its appearance image from `seed`), for verification (with petId) or identification. */
export async function probeSessionFrom(
  client: RhinariumClient,
  seed: number,
  photos: NosePhoto[],
  purpose: "PET_VERIFICATION" | "PET_IDENTIFICATION",
  petId?: string,
): Promise<string> {
  const session = await client.createCaptureSession({ species: "DOG", purpose, ...(petId ? { petId } : {}) });
  for (const photo of photos) await client.uploadFingerprint(session.id, await photo());
  await client.uploadAppearance(session.id, await appearanceJpeg(seed));
  return session.id;
}
