import fs from "node:fs";
import path from "node:path";
import { analyseImage, shutdownEngine } from "@/lib/biometrics";
import { templateVersionOf } from "@/lib/biometrics/template";
import { startProgress } from "@/lib/progress";
import { Rng } from "../synth/prng";
import { readLabelledDataset } from "./dataset";
import { EvalWorkers } from "./eval-workers";

/** Two images of a labelled set, by index into its image list (a < b). */
export interface LabelledPair {
  a: number;
  b: number;
  genuine: boolean;
}

export interface ImagePairOptions {
  /** How many impostor pairs to draw (a deterministic spread). */
  impostorPairs: number;
  /** Only pairs of one of a subject's first K captures (name order) and one later capture. */
  across?: number | null;
  /** A file keeping the templates, reused while the template format and the image list are the same. */
  cache?: string;
}

/** Image pairs of a labelled set, each compared upright and as a single pair is scored (`imagePairSimilarity`). */
export interface ImagePairRun {
  images: string[];
  pairs: LabelledPair[];
  /** Each image's template as `eval pairs` makes it (refused images described all the same), or null. */
  templates: (Uint8Array | null)[];
  /** Raw similarity of each pair, upright only. */
  upright: Float64Array;
  /** Raw similarity of each pair as scored: a pair not accepted upright also tried at its first image's quarter turns. */
  scored: Float64Array;
  /** Wall time of the comparisons, times the worker count, per pair. */
  msPerPair: number;
}

const PAIRS_PER_REQUEST = 500;
const log = (message: string) => process.stderr.write(`${message}\n`);

/**
 * Every genuine pair; impostor pairs drawn from a seeded generator, so a set always gives the same pairs.
 * With `across`, only pairs of an early capture (rank within its subject below K) and a later one.
 */
export function chooseImagePairs(subjectOf: readonly number[], impostorPairs: number, across: number | null = null): LabelledPair[] {
  const rank = new Array<number>(subjectOf.length).fill(0);
  for (let i = 1; i < rank.length; i++) rank[i] = subjectOf[i] === subjectOf[i - 1] ? rank[i - 1] + 1 : 0;
  const allowed = (a: number, b: number) => across === null || rank[a] < across !== rank[b] < across;
  const pairs: LabelledPair[] = [];
  for (let i = 0; i < subjectOf.length; i++) {
    for (let j = i + 1; j < subjectOf.length && subjectOf[j] === subjectOf[i]; j++) if (allowed(i, j)) pairs.push({ a: i, b: j, genuine: true });
  }
  const seen = new Set<number>();
  // mulberry32, not a linear congruential walk: the walk's consecutive draws have tied low bits, so on a set of 1,280
  // images (a multiple of 256) it found only 3,180 distinct impostor pairs.
  const spread = new Rng(12345);
  const next = () => spread.int(0, subjectOf.length - 1);
  for (let tries = 0; seen.size < impostorPairs && tries < impostorPairs * 20; tries++) {
    const a = next();
    const b = next();
    if (subjectOf[a] === subjectOf[b] || !allowed(a, b)) continue;
    const key = Math.min(a, b) * subjectOf.length + Math.max(a, b);
    if (seen.has(key)) continue;
    seen.add(key);
    pairs.push({ a: Math.min(a, b), b: Math.max(a, b), genuine: false });
  }
  return pairs;
}

/**
 * Every image's template as `eval pairs` makes it: a photo the quality gate refuses is still described (decision 0019);
 * one that cannot be read or decoded, or has no keypoint, has none (its error on stderr). With `cache`, the templates are
 * kept in that file and read back while the template format and the image list are the same.
 */
export async function pairTemplates(root: string, images: string[], cache?: string): Promise<(Uint8Array | null)[]> {
  if (cache && fs.existsSync(cache)) {
    const stored = JSON.parse(fs.readFileSync(cache, "utf8")) as { images: string[]; templates: (string | null)[]; describesUnusable?: boolean };
    const templates = stored.templates.map((t) => (t === null ? null : new Uint8Array(Buffer.from(t, "base64"))));
    const current = templates.find((t) => t !== null);
    const fresh = await analyseImage(fs.readFileSync(path.join(root, images[0])));
    const sameFormat = current && fresh.ok && fresh.template && templateVersionOf(current) === templateVersionOf(fresh.template);
    if (sameFormat && stored.describesUnusable && stored.images.join("\n") === images.join("\n")) {
      log(`templates from ${cache}`);
      return templates;
    }
  }
  const results: (Uint8Array | null)[] = new Array(images.length).fill(null);
  const progress = startProgress("extracting", images.length, (done) => {
    if (done % 400 === 0) log(`  extracted ${done}/${images.length}`);
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < images.length) {
        const index = next++;
        try {
          const analysis = await analyseImage(fs.readFileSync(path.join(root, images[index])), { describeUnusable: true });
          results[index] = analysis.ok ? analysis.template : null;
        } catch (error) {
          log(`${images[index]}: ${(error as Error).message}`);
        }
        progress.tick();
      }
    }),
  );
  progress.stop();
  if (cache) {
    fs.writeFileSync(cache, JSON.stringify({ images, templates: results.map((t) => (t ? Buffer.from(t).toString("base64") : null)), describesUnusable: true }));
  }
  return results;
}

/**
 * The image pairs of a labelled set (`chooseImagePairs`), each compared upright and as `eval pairs` scores a single
 * pair, over evaluation workers that turn each image at most once.
 */
export async function runImagePairs(root: string, options: ImagePairOptions): Promise<ImagePairRun> {
  const subjects = readLabelledDataset(root);
  const images = subjects.flatMap((s) => s.images);
  const subjectOf = subjects.flatMap((s, k) => s.images.map(() => k));
  const pairs = chooseImagePairs(subjectOf, options.impostorPairs, options.across ?? null);
  const genuine = pairs.filter((p) => p.genuine).length;
  log(`${subjects.length} subjects, ${images.length} images, ${genuine} genuine and ${pairs.length - genuine} impostor pairs`);
  const templates = await pairTemplates(root, images, options.cache);
  await shutdownEngine();
  const workers = new EvalWorkers();
  try {
    await workers.broadcast({ kind: "load", templates, files: images.map((image) => path.join(root, image)) });
    // Consecutive requests share first images, whose turned views a worker computes once.
    const order = pairs.map((_, k) => k).sort((x, y) => pairs[x].a - pairs[y].a || x - y);
    const requests = [];
    for (let start = 0; start < order.length; start += PAIRS_PER_REQUEST) {
      const chunk = order.slice(start, start + PAIRS_PER_REQUEST);
      requests.push({ kind: "image-pairs" as const, pairs: Int32Array.from(chunk.flatMap((k) => [pairs[k].a, pairs[k].b])) });
    }
    const progress = startProgress("comparing", requests.length, (done) => {
      if (done % 20 === 0) log(`  ${done}/${requests.length} batches`);
    });
    const started = performance.now();
    const chunks = await workers.map<Float64Array>(requests, () => progress.tick());
    const elapsed = performance.now() - started;
    progress.stop();
    const upright = new Float64Array(pairs.length);
    const scored = new Float64Array(pairs.length);
    let n = 0;
    for (const chunk of chunks) {
      for (let k = 0; k < chunk.length / 2; k++, n++) {
        upright[order[n]] = chunk[2 * k];
        scored[order[n]] = chunk[2 * k + 1];
      }
    }
    return { images, pairs, templates, upright, scored, msPerPair: (elapsed * workers.size) / Math.max(1, pairs.length) };
  } finally {
    await workers.close();
  }
}
