import fs from "node:fs";
import path from "node:path";
import { analyseImage, shutdownEngine, type ImageAnalysis } from "@/lib/biometrics/index";
import { sessionRawScore, triesQuarterTurns } from "@/lib/biometrics/scoring";
import { readLabelledDataset } from "./dataset";
import { EvalWorkers } from "./eval-workers";
import { canEnrol, canProbe, planProtocol, usableImages, type ProtocolOptions, type ProtocolPlan } from "./protocol";
import { startProgress } from "@/lib/progress";

export interface ProtocolRun {
  plan: ProtocolPlan;
  analyses: ImageAnalysis[];
  usable: boolean[];
  /** Subjects whose enrolment had too few usable images. */
  failedToEnrol: Set<string>;
  /** Raw session statistics (mean of the two best probe images' pair similarities); 0 when the probe was unusable. */
  genuineSessions: number[];
  impostorSessions: number[];
  /** The same sessions compared upright only (without the quarter turns a session under the threshold also tries). */
  uprightGenuineSessions: number[];
  uprightImpostorSessions: number[];
  /** Image-pair inlier counts from the same comparisons. */
  genuinePairs: number[];
  impostorPairs: number[];
  extractionMsPerImage: number;
  /** Wall time of the comparison phase spread over the session comparisons, times the worker count. */
  msPerSessionComparison: number;
  msPerPairComparison: number;
  workers: EvalWorkers;
}

const PAIRS_PER_REQUEST = 4000;
/** Consecutive sessions share their probe images, whose turned views each worker computes once. */
const SESSIONS_PER_TURN_REQUEST = 150;
const log = (message: string) => process.stderr.write(`${message}\n`);

/** Every image of the plan, each probe image with the outer frames that a 1:N probe's first stage reads (extract.ts). */
async function analyseAll(root: string, images: string[], probes: ReadonlySet<number>, concurrency: number): Promise<ImageAnalysis[]> {
  const results: ImageAnalysis[] = new Array(images.length);
  const progress = startProgress("extracting", images.length, (done) => {
    if (done % 500 === 0) log(`  extracted ${done}/${images.length}`);
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < images.length) {
        const index = next++;
        results[index] = await analyseImage(fs.readFileSync(path.join(root, images[index])), { outerFrames: probes.has(index) });
        progress.tick();
      }
    }),
  );
  progress.stop();
  return results;
}

/** Extract every image, then make all genuine and impostor session comparisons of the protocol. */
export async function runProtocol(root: string, options: ProtocolOptions): Promise<ProtocolRun> {
  const plan = planProtocol(readLabelledDataset(root), options);
  log(`${plan.enrolled.length} enrolled + ${plan.unenrolled.length} unenrolled subjects, ${plan.images.length} images`);
  const workers = new EvalWorkers();
  const probes = new Set([...plan.enrolled, ...plan.unenrolled].flatMap((subject) => subject.probe));
  const analyses = await analyseAll(root, plan.images, probes, workers.size * 2);
  await shutdownEngine();
  const extractionMs = analyses.reduce((sum, a) => sum + (a.ok ? a.extractionMs : 0), 0);
  const usable = analyses.map((a) => a.ok && a.template !== null);
  await workers.broadcast({
    kind: "load",
    templates: analyses.map((a) => (a.ok ? a.template : null)),
    files: plan.images.map((image, index) => (probes.has(index) ? path.join(root, image) : null)),
  });

  const failedToEnrol = new Set(plan.enrolled.filter((s) => !canEnrol(s, usable)).map((s) => s.id));
  const gallery = plan.enrolled.filter((s) => !failedToEnrol.has(s.id));
  const impostorSet = gallery.slice(0, plan.impostorSubjects);
  // Each session comparison: usable probe images x usable enrolled images, as a block of pair indices.
  const sessions: { genuine: boolean; probe: number[]; enrol: number[]; offset: number }[] = [];
  const flatPairs: number[] = [];
  const addSession = (genuine: boolean, probe: number[], enrol: number[]) => {
    sessions.push({ genuine, probe, enrol, offset: flatPairs.length / 2 });
    for (const p of probe) for (const e of enrol) flatPairs.push(p, e);
  };
  for (const subject of gallery) {
    const probe = canProbe(subject.probe, usable) ? usableImages(subject.probe, usable) : [];
    addSession(true, probe, usableImages(subject.enrol, usable));
  }
  for (const probeSubject of impostorSet) {
    const probe = canProbe(probeSubject.probe, usable) ? usableImages(probeSubject.probe, usable) : [];
    for (const enrolled of impostorSet) {
      if (enrolled !== probeSubject) addSession(false, probe, usableImages(enrolled.enrol, usable));
    }
  }
  const pairs = Int32Array.from(flatPairs);
  const requests = [];
  for (let start = 0; start < pairs.length; start += PAIRS_PER_REQUEST * 2) {
    requests.push({ kind: "pairs" as const, pairs: pairs.slice(start, start + PAIRS_PER_REQUEST * 2) });
  }
  log(`comparing ${sessions.length} sessions (${pairs.length / 2} image pairs) on ${workers.size} workers`);
  const started = performance.now();
  const progress = startProgress("comparing", requests.length, (done) => {
    if (done % 50 === 0) log(`  ${done}/${requests.length} batches`);
  });
  const chunks = await workers.map<Float64Array>(requests, () => progress.tick());
  progress.stop();
  const elapsed = performance.now() - started;
  const similarity = new Float64Array(pairs.length / 2);
  chunks.forEach((chunk, i) => similarity.set(chunk, i * PAIRS_PER_REQUEST));

  const matrices = sessions.map((session) =>
    session.probe.map((_, p) => Array.from(similarity.subarray(session.offset + p * session.enrol.length, session.offset + (p + 1) * session.enrol.length))),
  );
  const uprightRaw = matrices.map((matrix, s) => (sessions[s].probe.length ? sessionRawScore(matrix) : 0));
  // A session the upright comparison does not accept also tries its probe images at a quarter turn, as verifyPet does.
  const turning = sessions.map((_, s) => s).filter((s) => sessions[s].probe.length > 0 && triesQuarterTurns(uprightRaw[s]));
  log(`turning the probes of ${turning.length} sessions under the threshold`);
  const turnStarted = performance.now();
  const turnRequests = [];
  for (let start = 0; start < turning.length; start += SESSIONS_PER_TURN_REQUEST) {
    const batch = turning.slice(start, start + SESSIONS_PER_TURN_REQUEST);
    turnRequests.push({ kind: "turned-sessions" as const, sessions: batch.map((s) => ({ probe: sessions[s].probe, enrol: sessions[s].enrol })) });
  }
  const turnProgress = startProgress("turning", turnRequests.length, (done) => {
    if (done % 20 === 0) log(`  ${done}/${turnRequests.length} batches`);
  });
  const turned = (await workers.map<number[][][]>(turnRequests, () => turnProgress.tick())).flat();
  turnProgress.stop();
  const turnElapsed = performance.now() - turnStarted;
  turning.forEach((s, k) => {
    matrices[s] = matrices[s].map((row, p) => row.map((value, e) => Math.max(value, turned[k][p][e])));
  });

  const run: ProtocolRun = {
    plan, analyses, usable, failedToEnrol, workers,
    genuineSessions: [], impostorSessions: [], uprightGenuineSessions: [], uprightImpostorSessions: [], genuinePairs: [], impostorPairs: [],
    extractionMsPerImage: extractionMs / Math.max(1, usable.length),
    msPerSessionComparison: ((elapsed + turnElapsed) * workers.size) / Math.max(1, sessions.length),
    msPerPairComparison: (elapsed * workers.size) / Math.max(1, similarity.length),
  };
  sessions.forEach((session, s) => {
    (session.genuine ? run.genuineSessions : run.impostorSessions).push(session.probe.length ? sessionRawScore(matrices[s]) : 0);
    (session.genuine ? run.uprightGenuineSessions : run.uprightImpostorSessions).push(uprightRaw[s]);
    // The sessions' image pairs as compared upright (single pairs as `eval pairs` scores them, quarter turns included,
    // are `runImagePairs`'): the protocol's pair figures.
    const offset = session.offset;
    for (let k = 0; k < session.probe.length * session.enrol.length; k++) (session.genuine ? run.genuinePairs : run.impostorPairs).push(similarity[offset + k]);
  });
  return run;
}
