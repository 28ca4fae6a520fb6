import fs from "node:fs";
import sharp from "sharp";
import type { ProbeSetting } from "./identification";
import { Rng } from "@/lab/synth/prng";
import { startLatencyProbe } from "@/lab/test-support/latency-probe";
import { apiClient, probeSessionFrom, registerPetFrom, type NosePhoto } from "@/lab/test-support/scale";
import { ops, type TestServer } from "@/lab/test-support/server";
import { distractorPoolFiles, ENROL_CAPTURES, PROBE_CAPTURES, probeSetFiles, type IdentificationBenchOptions } from "./identification";
import { quantile, readFigures } from "./stats";

// 1:N through the API as a client meets it: a gallery of `pets` pets registered through the API (the probe setting's
// enrolled subjects, topped up with distractor pets each registered from five images of the distractor pool, as
// `npm run bench -- --only identification` mixes them), then each probe's identification timed from its POST to the
// poll that sees it SUCCESS. Uploading the probe's photos is not timed (the client does it before asking). Then no
// stall on that gallery: two clients identify at once (enrolled and unknown animals) while a third, in its own process,
// reads a pet every 25 ms; a reset connection counts as a failed read.

export interface ApiIdentificationFigures {
  setting: ProbeSetting;
  pets: number;
  registerSeconds: number;
  pollMs: number;
  enrolled: { probes: number; p50: number; p95: number; max: number; rank1: number };
  unknown: { probes: number; p50: number; p95: number; max: number; nobody: number };
  /** Two clients identifying at once (one enrolled animal after another, one unknown after another). */
  underLoad: { identifications: number; p50: number; p95: number; get: { calls: number; p50: number; p99: number; max: number; failed: number } };
}

/** How many registrations run at once while the gallery is built. */
const REGISTERING_CLIENTS = 4;
/** The timing client's poll interval: a finished job is seen within this. */
const POLL_MS = 25;

export async function benchApiIdentification(
  server: TestServer,
  pets: number,
  setting: ProbeSetting,
  options: Omit<IdentificationBenchOptions, "sizes">,
): Promise<ApiIdentificationFigures> {
  const account = await ops(server.env, "account:create", "--name", "Bench 1:N", "--plan", "standard");
  const client = apiClient(server.baseUrl, account.apiKey as string);
  const timing = apiClient(server.baseUrl, account.apiKey as string, POLL_MS);
  const { files } = await probeSetFiles(setting, options);
  const { poolFiles } = await distractorPoolFiles(options);
  const read = (file: string): NosePhoto => () => fs.promises.readFile(file);
  // A pool image or its mirror image (to the matcher another nose), as the engine-level bench mixes them.
  const poolImage = (i: number): NosePhoto => (i < poolFiles.length ? read(poolFiles[i]) : () => sharp(poolFiles[i - poolFiles.length]).flop().jpeg({ quality: 92 }).toBuffer());
  const rng = new Rng(779);
  const registrations: { photos: NosePhoto[]; genuine?: number }[] = [
    ...Array.from({ length: Math.min(options.genuine, pets) }, (_, s) => ({ photos: ENROL_CAPTURES.map((c) => read(files[s][c])), genuine: s })),
    ...Array.from({ length: Math.max(0, pets - options.genuine) }, () => ({
      photos: Array.from({ length: 5 }, () => poolImage(Math.floor(rng.next() * poolFiles.length * 2))),
    })),
  ];
  options.log(`API identification: registering ${registrations.length} pets through the API (${setting} setting)`);
  const petOf = new Map<number, string>();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: REGISTERING_CLIENTS }, async () => {
      while (next < registrations.length) {
        const n = next++;
        const petId = await registerPetFrom(client, 10_000 + n, registrations[n].photos);
        if (registrations[n].genuine !== undefined) petOf.set(registrations[n].genuine!, petId);
        if (n % 100 === 99) options.log(`API identification: ${n + 1} pets registered`);
      }
    }),
  );
  const registerSeconds = (performance.now() - started) / 1000;
  const probeSession = (subject: number) =>
    probeSessionFrom(client, 20_000 + subject, PROBE_CAPTURES.map((c) => read(files[subject][c])), "PET_IDENTIFICATION");
  const identify = async (subject: number, prepared?: string) => {
    const session = prepared ?? (await probeSession(subject));
    const t0 = performance.now();
    const job = await timing.waitForIdentification((await timing.identifyPet(session)).jobId);
    const ms = performance.now() - t0;
    if (job.status !== "SUCCESS") throw new Error(`identification of subject ${subject} ended ${job.status}`);
    return { ms, candidates: job.pets ?? [] };
  };
  // Warm-up: the gallery is loaded and the engine's threads have run every stage once.
  await identify(0);
  await identify(options.genuine);
  options.log("API identification: timing enrolled and unknown animals");
  const enrolled: number[] = [];
  let rank1 = 0;
  for (let s = 0; s < Math.min(options.genuine, pets); s++) {
    const { ms, candidates } = await identify(s);
    enrolled.push(ms);
    if (candidates[0]?.id === petOf.get(s)) rank1++;
  }
  const unknown: number[] = [];
  let nobody = 0;
  for (let s = options.genuine; s < options.genuine + options.strangers; s++) {
    const { ms, candidates } = await identify(s);
    unknown.push(ms);
    if (candidates.length === 0) nobody++;
  }
  // No stall: the sessions are uploaded first, so that only identifications and the reads run together.
  const enrolledSubjects = Array.from({ length: Math.min(options.genuine, pets, options.strangers) }, (_, s) => s);
  const unknownSubjects = Array.from({ length: options.strangers }, (_, i) => options.genuine + i);
  const sessions = new Map<number, string>();
  for (const s of [...enrolledSubjects, ...unknownSubjects]) sessions.set(s, await probeSession(s));
  const probe = await startLatencyProbe(`${server.baseUrl}/v2/pets/${petOf.get(0)}`, { "x-service-api-key": account.apiKey as string });
  const together = (await Promise.all([enrolledSubjects, unknownSubjects].map(async (list) => {
    const latencies: number[] = [];
    for (const s of list) latencies.push((await identify(s, sessions.get(s))).ms);
    return latencies;
  }))).flat();
  const reads = await probe.stop();
  const figures = (samples: number[]) => ({ probes: samples.length, p50: quantile(samples, 0.5), p95: quantile(samples, 0.95), max: Math.max(...samples) });
  return {
    setting,
    pets: registrations.length,
    registerSeconds,
    pollMs: POLL_MS,
    enrolled: { ...figures(enrolled), rank1: rank1 / Math.max(1, enrolled.length) },
    unknown: { ...figures(unknown), nobody: nobody / Math.max(1, unknown.length) },
    underLoad: {
      identifications: together.length,
      p50: quantile(together, 0.5),
      p95: quantile(together, 0.95),
      get: readFigures(reads),
    },
  };
}
