import os from "node:os";
import sharp from "sharp";
import type { RhinariumClient } from "@rhinarium/sdk";
import { createApiKeyCache } from "@/lib/accounts/api-key-cache";
import { flushApiCalls, recordApiCall } from "@/lib/api/metering";
import { openDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import * as engine from "@/lib/engine";
import { getPetOrThrow } from "@/lib/pets/pets";
import { startLatencyProbe } from "@/lab/test-support/latency-probe";
import { noseCapture } from "@/lab/test-support/nose-images";
import { apiClient, probeSession, registerPet } from "@/lab/test-support/scale";
import { ops, type TestServer } from "@/lab/test-support/server";
import { loadTest, postgresPids, startCeilingServer, type LoadResult } from "./api-load";
import { quantile, readFigures } from "./stats";

// The service figures, each beside its reference measured in the same run: API calls against a bare
// http server answering the same JSON, uploads against sharp decoding the same images, job latency
// seen by a polling client against the engine's own time for the same work.

export interface ApiFigures {
  get: { server: LoadResult; ceiling: LoadResult; databaseOnly?: number };
  post: { server: LoadResult; ceiling: LoadResult };
  /** One pet patched by every connection (its row lock serialises the updates, in both runs alike). */
  patch: { server: LoadResult; ceiling: LoadResult };
}

/**
 * The work of one `GET /v2/pets/{id}` without HTTP (the key from a key cache, the pet read, the metering row buffered, as
 * in the server) with the same number of concurrent callers: how much of the gap to the ceiling is the database.
 */
async function databaseOnlyReads(databaseUrl: string, key: string, petId: string, load: { connections: number; seconds: number }): Promise<number> {
  const open = await openDatabase(readEnv({ DATABASE_URL: databaseUrl } as unknown as NodeJS.ProcessEnv));
  // As in a server whose notification connection is up (the bench changes no key meanwhile).
  const keys = createApiKeyCache();
  keys.setLive(true);
  try {
    const until = performance.now() + load.seconds * 1000;
    let calls = 0;
    await Promise.all(
      Array.from({ length: load.connections }, async () => {
        while (performance.now() < until) {
          const apiKey = await keys.find(open.prisma, key);
          await getPetOrThrow(open.prisma, apiKey!.accountId, petId);
          recordApiCall(open.prisma, { accountId: apiKey!.accountId, apiKeyId: apiKey!.id, method: "GET", route: "bench", status: 200, latencyMs: 0 });
          calls++;
        }
      }),
    );
    return calls / load.seconds;
  } finally {
    await flushApiCalls();
    await open.close();
  }
}

export async function benchApi(server: TestServer, load: { connections: number; seconds: number }, databaseUrl?: string): Promise<ApiFigures> {
  const account = await ops(server.env, "account:create", "--name", "Bench clinic");
  const key = account.apiKey as string;
  const headers = { "x-service-api-key": key, "content-type": "application/json" };
  const body = JSON.stringify({ species: "DOG", breed: "Beagle", metadata: JSON.stringify({ name: "Rex", chip: "250269604000000" }) });
  const created = await fetch(`${server.baseUrl}/v2/pets`, { method: "POST", headers, body });
  const postBody = await created.text();
  const petId = (JSON.parse(postBody) as { data: { id: string } }).data.id;
  const getBody = await (await fetch(`${server.baseUrl}/v2/pets/${petId}`, { headers })).text();
  const patch = JSON.stringify({ metadata: JSON.stringify({ name: "Rex", chip: "250269604000001" }) });
  const patchBody = await (await fetch(`${server.baseUrl}/v2/pets/${petId}`, { method: "PATCH", headers, body: patch })).text();
  // As a process that also serves the dashboard: once Next has rendered a page, its AsyncLocalStorage
  // keeps Node 20's promise hooks on, and every promise of the API costs more (docs/benchmarks.md).
  const page = await fetch(`${server.baseUrl}/sign-in`);
  if (!page.ok) throw new Error(`the sign-in page answered ${page.status}`);
  await page.text();
  const ceiling = await startCeilingServer(getBody, postBody, patchBody);
  try {
    const get = {
      ceiling: await loadTest(`${ceiling.baseUrl}/v2/pets/${petId}`, { ...load, headers, cpuOf: { server: () => [ceiling.pid] } }),
      server: await loadTest(`${server.baseUrl}/v2/pets/${petId}`, { ...load, headers, cpuOf: { server: () => [server.pid], postgres: postgresPids } }),
      databaseOnly: databaseUrl ? await databaseOnlyReads(databaseUrl, key, petId, load) : undefined,
    };
    const post = {
      ceiling: await loadTest(`${ceiling.baseUrl}/v2/pets`, { ...load, method: "POST", body, headers }),
      server: await loadTest(`${server.baseUrl}/v2/pets`, { ...load, method: "POST", body, headers }),
    };
    const patchLoad = { ...load, method: "PATCH" as const, body: patch, headers };
    const patched = {
      ceiling: await loadTest(`${ceiling.baseUrl}/v2/pets/${petId}`, patchLoad),
      server: await loadTest(`${server.baseUrl}/v2/pets/${petId}`, patchLoad),
    };
    return { get, post, patch: patched };
  } finally {
    await ceiling.stop();
  }
}

export interface UploadFigures {
  images: number;
  concurrency: number;
  uploadsPerSecond: number;
  uploadP50: number;
  uploadP95: number;
  decodesPerSecond: number;
}

/** Nose images uploaded by `concurrency` clients at once vs sharp decoding the same JPEGs (same concurrency). */
export async function benchUploads(client: RhinariumClient, images: number, concurrency: number): Promise<UploadFigures> {
  const jpegs = await Promise.all(Array.from({ length: images }, (_, i) => noseCapture(900 + Math.floor(i / 8), i % 8)));
  const petIds = await Promise.all(Array.from({ length: Math.ceil(images / 20) }, () => client.createPet({ species: "DOG" })));
  const sessions = await Promise.all(petIds.map((p) => client.createCaptureSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: p.id })));
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jpegs.length) {
        const i = next++;
        const t0 = performance.now();
        await client.uploadFingerprint(sessions[Math.floor(i / 20)].id, jpegs[i]);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const uploadsPerSecond = jpegs.length / ((performance.now() - started) / 1000);

  sharp.concurrency(1);
  let decoded = 0;
  const decodeStarted = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, os.availableParallelism()) }, async () => {
      while (decoded < jpegs.length) {
        const i = decoded++;
        await sharp(jpegs[i]).greyscale().raw().toBuffer();
      }
    }),
  );
  const decodesPerSecond = jpegs.length / ((performance.now() - decodeStarted) / 1000);
  return { images, concurrency, uploadsPerSecond, uploadP50: quantile(latencies, 0.5), uploadP95: quantile(latencies, 0.95), decodesPerSecond };
}

export interface JobFigures {
  jobs: number;
  verification: { p50: number; p95: number };
  identification: { p50: number; p95: number; galleryPets: number };
  /** The engine's verifyPet alone on the same templates, in this process. */
  engineVerification: { p50: number; p95: number };
  /** Two clients identifying at once (an enrolled pet, an animal nobody enrolled) while a third reads a pet. */
  underLoad: {
    identifications: number;
    enrolled: { p50: number; p95: number };
    unknown: { p50: number; p95: number };
    /** GET /v2/pets/{id} every 25 ms meanwhile: latencies of the answered ones, and the calls that failed. */
    get: { calls: number; p50: number; p99: number; max: number; failed: number };
  };
}

/** Start → SUCCESS seen by a client polling every 50 ms, one job at a time. */
export async function benchJobs(server: TestServer, jobs: number): Promise<JobFigures> {
  const account = await ops(server.env, "account:create", "--name", "Bench jobs", "--plan", "standard");
  const client = apiClient(server.baseUrl, account.apiKey as string);
  const polling = apiClient(server.baseUrl, account.apiKey as string, 50);
  const pets = [await registerPet(client, 801), await registerPet(client, 802), await registerPet(client, 803)];
  const verification: number[] = [];
  const identification: number[] = [];
  for (let k = 0; k < jobs; k++) {
    const petIndex = k % pets.length;
    const vSession = await probeSession(client, 801 + petIndex, "PET_VERIFICATION", pets[petIndex]);
    const iSession = await probeSession(client, 801 + petIndex, "PET_IDENTIFICATION");
    let t0 = performance.now();
    const v = await polling.waitForVerification((await polling.verifyPet(pets[petIndex], vSession)).jobId);
    verification.push(performance.now() - t0);
    if (v.status !== "SUCCESS") throw new Error(`verification job ended ${v.status}`);
    t0 = performance.now();
    const i = await polling.waitForIdentification((await polling.identifyPet(iSession)).jobId);
    identification.push(performance.now() - t0);
    if (i.status !== "SUCCESS") throw new Error(`identification job ended ${i.status}`);
  }
  // No stall: two clients identify at once, one an enrolled pet and one an animal nobody enrolled (a stray's deep
  // pass), while a third client (its own process) reads a pet; a connection reset counts as a failed call.
  const sessions = async (seed: number) => Array.from({ length: jobs }, () => probeSession(client, seed, "PET_IDENTIFICATION"));
  const known = await Promise.all(await sessions(801));
  const stray = await Promise.all(await sessions(899));
  const probe = await startLatencyProbe(`${server.baseUrl}/v2/pets/${pets[0]}`, { "x-service-api-key": account.apiKey as string });
  const identifyAll = async (list: string[]) => {
    const latencies: number[] = [];
    for (const session of list) {
      const t0 = performance.now();
      const done = await polling.waitForIdentification((await polling.identifyPet(session)).jobId);
      latencies.push(performance.now() - t0);
      if (done.status !== "SUCCESS") throw new Error(`identification job ended ${done.status}`);
    }
    return latencies;
  };
  const [knownLatencies, strayLatencies] = await Promise.all([identifyAll(known), identifyAll(stray)]);
  const reads = await probe.stop();
  // The engine alone, on templates of the same captures.
  const templates = async (seed: number, captures: number[]) =>
    (await Promise.all(captures.map(async (c) => engine.analyseImage(await noseCapture(seed, c))))).flatMap((a) => (a.ok && a.template ? [a.template] : []));
  const enrolled = await Promise.all([801, 802, 803].map((s) => templates(s, [0, 1, 2, 3, 4])));
  const probes = await Promise.all([801, 802, 803].map((s) => templates(s, [5, 6, 7])));
  const engineSamples: number[] = [];
  for (let k = 0; k < jobs; k++) {
    const t0 = performance.now();
    await engine.verifyPet(probes[k % 3], enrolled[k % 3]);
    engineSamples.push(performance.now() - t0);
  }
  return {
    jobs,
    verification: { p50: quantile(verification, 0.5), p95: quantile(verification, 0.95) },
    identification: { p50: quantile(identification, 0.5), p95: quantile(identification, 0.95), galleryPets: pets.length },
    engineVerification: { p50: quantile(engineSamples, 0.5), p95: quantile(engineSamples, 0.95) },
    underLoad: {
      identifications: known.length + stray.length,
      enrolled: { p50: quantile(knownLatencies, 0.5), p95: quantile(knownLatencies, 0.95) },
      unknown: { p50: quantile(strayLatencies, 0.5), p95: quantile(strayLatencies, 0.95) },
      get: readFigures(reads),
    },
  };
}
