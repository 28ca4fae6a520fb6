// Dataset layout: out/<subject>/<capture>.jpg plus out/manifest.json. Every file is a pure
// function of (seed, subject index, capture index, difficulty, backdrop), so results do not depend on how
// subjects are split across workers.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { BackdropKind } from "./backdrop";
import { type Framing, type Roll, renderCapture } from "./capture";
import { createNoseSubject, type NoseSubject } from "./nose-surface";
import { DIFFICULTY, GENERATOR_VERSION, REAL, type DifficultyName } from "./parameters";
import { Rng, hashSeed } from "./prng";

export interface DatasetOptions {
  out: string;
  subjects: number;
  captures: number;
  seed: number;
  difficulty: DifficultyName;
  /** "real" only: what lies behind the nose (plain by default). */
  backdrop?: BackdropKind;
  /** "real" only: how closely crops frame the pad (tight by default). */
  framing?: Framing;
  /** "real" only: how captures are turned in the image plane (upright by default). */
  roll?: Roll;
  /** Worker threads; 1 renders in-process. */
  workers?: number;
  /** Called once a subject's captures are written (for a progress bar). */
  onSubjectDone?: () => void;
}

export interface DatasetManifest {
  seed: number;
  difficulty: DifficultyName;
  subjects: number;
  captures: number;
  /** Present for "real" sets. */
  backdrop?: BackdropKind;
  /** Present for "real" sets framed loosely (absent: tight). */
  framing?: Framing;
  /** Present for "real" sets turned at any angle (absent: upright). */
  roll?: Roll;
  generatorVersion: string;
}

export const MANIFEST_FILE = "manifest.json";

export function subjectDirName(index: number, subjects: number): string {
  return `s${String(index).padStart(Math.max(5, String(subjects - 1).length), "0")}`;
}

export function captureFileName(index: number, captures: number): string {
  return `c${String(index).padStart(Math.max(2, String(captures - 1).length), "0")}.jpg`;
}

export function subjectSeed(datasetSeed: number, subjectIndex: number): number {
  return hashSeed(datasetSeed, subjectIndex, 0x5b1ec7);
}

export function captureSeed(subjectSeedValue: number, captureIndex: number): number {
  return hashSeed(subjectSeedValue, captureIndex, 0xca97);
}

/**
 * Splits a subject's captures into bursts (hard mode): consecutive captures share a burst seed,
 * like frames of one shooting session. Returns undefined entries for independent photos.
 */
export function burstLayout(
  subjectSeedValue: number,
  captures: number,
  difficulty: DifficultyName,
): ({ seed: number; frame: number } | undefined)[] {
  const [minSize, maxSize] = difficulty === "real" ? REAL.burstSize : DIFFICULTY[difficulty].burstSize;
  if (maxSize <= 1) return Array.from({ length: captures }, () => undefined);
  const rng = new Rng(hashSeed(subjectSeedValue, 0xb0b5));
  const layout: { seed: number; frame: number }[] = [];
  for (let burst = 0; layout.length < captures; burst++) {
    const size = rng.int(minSize, maxSize);
    const seed = hashSeed(subjectSeedValue, burst, 0xb7);
    for (let frame = 0; frame < size && layout.length < captures; frame++) layout.push({ seed, frame });
  }
  return layout;
}

export interface SubjectJob {
  out: string;
  seed: number;
  subjects: number;
  captures: number;
  difficulty: DifficultyName;
  backdrop?: BackdropKind;
  framing?: Framing;
  roll?: Roll;
}

/** The subject as a setting renders it ("real" recolours the pigment). */
export function createSubjectFor(difficulty: DifficultyName, seed: number): NoseSubject {
  return createNoseSubject(seed, difficulty === "real" ? { pigment: "real" } : {});
}

/** The capture options of capture `c` of a subject of a set (its burst and, for "real", backdrop). */
export function captureOptionsFor(
  job: Pick<SubjectJob, "seed" | "difficulty" | "backdrop" | "framing" | "roll">,
  burst: { seed: number; frame: number } | undefined,
) {
  return {
    difficulty: job.difficulty,
    ...(burst ? { burst } : {}),
    ...(job.difficulty === "real" ? { backdrop: { kind: job.backdrop ?? "plain", setSeed: job.seed } } : {}),
    ...(job.difficulty === "real" && job.framing === "loose" ? { framing: job.framing } : {}),
    ...(job.difficulty === "real" && job.roll === "any" ? { roll: job.roll } : {}),
  };
}

/** Renders and writes all captures of one subject. */
export async function generateSubject(job: SubjectJob, subjectIndex: number): Promise<void> {
  const sSeed = subjectSeed(job.seed, subjectIndex);
  const subject = createSubjectFor(job.difficulty, sSeed);
  const bursts = burstLayout(sSeed, job.captures, job.difficulty);
  const dir = path.join(job.out, subjectDirName(subjectIndex, job.subjects));
  await mkdir(dir, { recursive: true });
  // Not awaited one by one: JPEG encoding runs on libuv threads and overlaps the next render.
  const captures = Array.from({ length: job.captures }, (_, c) => {
    const burst = bursts[c];
    return renderCapture(subject, captureSeed(sSeed, c), captureOptionsFor(job, burst));
  });
  await Promise.all(
    captures.map(async (capture, c) =>
      writeFile(path.join(dir, captureFileName(c, job.captures)), (await capture).jpeg),
    ),
  );
}

export async function generateDataset(options: DatasetOptions): Promise<DatasetManifest> {
  const job: SubjectJob = {
    out: path.resolve(options.out),
    seed: options.seed >>> 0,
    subjects: options.subjects,
    captures: options.captures,
    difficulty: options.difficulty,
    ...(options.difficulty === "real" ? { backdrop: options.backdrop ?? "plain" } : {}),
    ...(options.difficulty === "real" && options.framing === "loose" ? { framing: options.framing } : {}),
    ...(options.difficulty === "real" && options.roll === "any" ? { roll: options.roll } : {}),
  };
  await mkdir(job.out, { recursive: true });
  const workers = Math.max(1, Math.min(options.workers ?? 1, options.subjects));
  if (workers === 1) {
    for (let s = 0; s < job.subjects; s++) {
      await generateSubject(job, s);
      options.onSubjectDone?.();
    }
  } else {
    await Promise.all(Array.from({ length: workers }, (_, w) => runWorker(job, w, workers, options.onSubjectDone)));
  }
  const manifest: DatasetManifest = {
    seed: job.seed,
    difficulty: job.difficulty,
    subjects: job.subjects,
    captures: job.captures,
    ...(job.backdrop ? { backdrop: job.backdrop } : {}),
    ...(job.framing ? { framing: job.framing } : {}),
    ...(job.roll ? { roll: job.roll } : {}),
    generatorVersion: GENERATOR_VERSION,
  };
  // Written last, so its presence marks a complete dataset.
  await writeFile(path.join(job.out, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

export interface WorkerTask {
  job: SubjectJob;
  /** Subjects with index % stride === offset (interleaved so workers finish together). */
  offset: number;
  stride: number;
}

function runWorker(job: SubjectJob, offset: number, stride: number, onSubjectDone?: () => void): Promise<void> {
  const task: WorkerTask = { job, offset, stride };
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerBootstrapUrl(), { workerData: task });
    // The worker posts one message a subject written (dataset-worker.ts).
    worker.on("message", () => onSubjectDone?.());
    worker.once("error", reject);
    worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`synth worker exited with code ${code}`))));
  });
}

/**
 * Workers do not inherit the TypeScript loader hooks tsx registered in the main thread, so a tiny
 * ES-module bootstrap registers them before importing the TypeScript worker entry.
 */
function workerBootstrapUrl(): URL {
  const entry = new URL("./dataset-worker.ts", import.meta.url).href;
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const source = `import { register } from ${JSON.stringify(tsxApi)};\nregister();\nawait import(${JSON.stringify(entry)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}
