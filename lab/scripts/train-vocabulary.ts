/**
 * npm run train:vocabulary -- DIR [--images 1200] [--seed 7] [--descriptor-cache FILE]
 * Learns the 1:N index's visual vocabulary from the INDEXED_KEYPOINTS strongest descriptors of an evenly
 * spaced sample of DIR's images: VOCABULARY_COARSE cells by k-means, VOCABULARY_FINE words inside each
 * cell by k-means on the cell's members, a seeded random orthonormal projection for the Hamming
 * signatures, and each word's median projections. Writes lib/biometrics/vocabulary.bin. Train on a
 * synthetic set generated with a seed no evaluation uses (202). Bump TEMPLATE_VERSION when it changes.
 * The sample is extracted on every core. `--descriptor-cache FILE` keeps the sampled descriptors (their extraction is
 * most of a run) for another run on the same images, e.g. with other VOCABULARY_COARSE / VOCABULARY_FINE.
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { startProgress } from "@/lib/progress";
import { readLabelledDataset } from "../evaluation/dataset";
import { EvalWorkers } from "../evaluation/eval-workers";
import {
  DESCRIPTOR_DIMS,
  INDEXED_KEYPOINTS,
  SIGNATURE_BITS,
  VOCABULARY_COARSE,
  VOCABULARY_FINE,
  VOCABULARY_WORDS,
} from "@/lib/biometrics/parameters";
import { dotProductMatrix } from "@/lib/biometrics/simd/dot-kernel";
import { assignWords, projectDescriptors, serializeVocabulary, vocabulary, VOCABULARY_FILE, type Vocabulary } from "@/lib/biometrics/visual-words";

const { positionals, values } = parseScriptArgs({
  name: "train:vocabulary",
  description: "Learns the 1:N index's visual vocabulary from a sample of DIR's images (bump the template format).",
  args: "DIR",
  options: {
    images: { type: "string", default: "1200" },
    seed: { type: "string", default: "7" },
    // Keep the trained centroids and projection; recompute only the signature medians.
    "medians-only": { type: "boolean", default: false },
    "descriptor-cache": { type: "string" },
  },
});
const root = positionals[0];
if (!root) throw new Error("usage: train:vocabulary DIR [--images 1200] [--seed 7] [--descriptor-cache FILE]");

let state = Number(values.seed) >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

// --- sample descriptors --------------------------------------------------------------------------
const all = readLabelledDataset(root).flatMap((s) => s.images);
const wanted = Math.min(Number(values.images), all.length);
const sample = Array.from({ length: wanted }, (_, i) => all[Math.floor((i * all.length) / wanted)]);
/** Images a worker extracts per request. */
const SAMPLE_BATCH = 25;
/** The sampled images' INDEXED_KEYPOINTS strongest upright descriptors, one after another (extracted on every core). */
async function sampleDescriptors(): Promise<Int8Array> {
  const workers = new EvalWorkers();
  const batches = Array.from({ length: Math.ceil(sample.length / SAMPLE_BATCH) }, (_, b) => sample.slice(b * SAMPLE_BATCH, (b + 1) * SAMPLE_BATCH));
  const progress = startProgress("sampling descriptors", batches.length);
  let results: (Int8Array | null)[][];
  try {
    results = await workers.map<(Int8Array | null)[]>(
      batches.map((batch) => ({ kind: "upright-descriptors", files: batch.map((image) => path.join(root, image)), limit: INDEXED_KEYPOINTS })),
      () => progress.tick(),
    );
  } finally {
    progress.stop();
    await workers.close();
  }
  // Unusable training images are simply not sampled.
  const chunks = results.flat().filter((c): c is Int8Array => c !== null);
  const joined = new Int8Array(chunks.reduce((n, c) => n + c.length, 0));
  chunks.reduce((offset, c) => (joined.set(c, offset), offset + c.length), 0);
  return joined;
}
const descriptorCache = values["descriptor-cache"];
const cached = descriptorCache !== undefined && fs.existsSync(descriptorCache);
const data = cached ? new Int8Array(fs.readFileSync(descriptorCache)) : await sampleDescriptors();
if (descriptorCache && !cached) fs.writeFileSync(descriptorCache, data);
const count = data.length / DESCRIPTOR_DIMS;
console.error(`${count} descriptors from ${sample.length} images`);

// --- k-means on int8 rows (assignment by the SIMD kernel on int8-rounded centroids) ---------------
function nearestOf(rows: Int8Array, centroids: Float32Array, k: number): Int32Array {
  const quantised = Int8Array.from(centroids, (v) => Math.max(-128, Math.min(127, Math.round(v))));
  const norms = new Float32Array(k);
  for (let j = 0; j < k; j++) for (let d = 0; d < DESCRIPTOR_DIMS; d++) norms[j] += quantised[j * DESCRIPTOR_DIMS + d] ** 2;
  const n = rows.length / DESCRIPTOR_DIMS;
  const nearest = new Int32Array(n);
  const block = 4096;
  for (let start = 0; start < n; start += block) {
    const end = Math.min(n, start + block);
    const dots = dotProductMatrix(rows.subarray(start * DESCRIPTOR_DIMS, end * DESCRIPTOR_DIMS), quantised, DESCRIPTOR_DIMS);
    for (let i = start; i < end; i++) {
      let best = 0;
      let bestDistance = Infinity;
      for (let j = 0; j < k; j++) {
        const distance = norms[j] - 2 * dots[(i - start) * k + j];
        if (distance < bestDistance) [best, bestDistance] = [j, distance];
      }
      nearest[i] = best;
    }
  }
  return nearest;
}

function kMeans(rows: Int8Array, k: number, iterations: number): Float32Array {
  const n = rows.length / DESCRIPTOR_DIMS;
  const centroids = new Float32Array(k * DESCRIPTOR_DIMS);
  // k-means++ seeding on squared distances.
  const distance = new Float64Array(n).fill(Infinity);
  let chosen = Math.floor(random() * n);
  for (let j = 0; j < k; j++) {
    for (let d = 0; d < DESCRIPTOR_DIMS; d++) centroids[j * DESCRIPTOR_DIMS + d] = rows[chosen * DESCRIPTOR_DIMS + d];
    let total = 0;
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let d = 0; d < DESCRIPTOR_DIMS; d++) sum += (rows[i * DESCRIPTOR_DIMS + d] - centroids[j * DESCRIPTOR_DIMS + d]) ** 2;
      distance[i] = Math.min(distance[i], sum);
      total += distance[i];
    }
    let target = random() * total;
    chosen = 0;
    while (chosen < n - 1 && (target -= distance[chosen]) > 0) chosen++;
  }
  for (let iteration = 0; iteration < iterations; iteration++) {
    const nearest = nearestOf(rows, centroids, k);
    const sums = new Float64Array(k * DESCRIPTOR_DIMS);
    const counts = new Int32Array(k);
    for (let i = 0; i < n; i++) {
      counts[nearest[i]]++;
      for (let d = 0; d < DESCRIPTOR_DIMS; d++) sums[nearest[i] * DESCRIPTOR_DIMS + d] += rows[i * DESCRIPTOR_DIMS + d];
    }
    for (let j = 0; j < k; j++) {
      if (counts[j] === 0) continue; // an empty cluster keeps its centroid
      for (let d = 0; d < DESCRIPTOR_DIMS; d++) centroids[j * DESCRIPTOR_DIMS + d] = sums[j * DESCRIPTOR_DIMS + d] / counts[j];
    }
  }
  return centroids;
}

const toInt8 = (values: Float32Array) => Int8Array.from(values, (v) => Math.max(-128, Math.min(127, Math.round(v))));

function trainCentroids(): { coarse: Int8Array; fine: Int8Array } {
  const coarse = toInt8(kMeans(data, VOCABULARY_COARSE, 15));
  const cellOf = nearestOf(data, Float32Array.from(coarse), VOCABULARY_COARSE);
  const fine = new Int8Array(VOCABULARY_WORDS * DESCRIPTOR_DIMS);
  const byCell = Array.from({ length: VOCABULARY_COARSE }, () => [] as number[]);
  cellOf.forEach((cell, i) => byCell[cell].push(i));
  for (let cell = 0; cell < VOCABULARY_COARSE; cell++) {
    const members = byCell[cell];
    const rows = new Int8Array(members.length * DESCRIPTOR_DIMS);
    members.forEach((i, m) => rows.set(data.subarray(i * DESCRIPTOR_DIMS, (i + 1) * DESCRIPTOR_DIMS), m * DESCRIPTOR_DIMS));
    // A cell with fewer members than words repeats its members (those words simply stay rare).
    const padded = members.length >= VOCABULARY_FINE ? rows : Int8Array.from({ length: VOCABULARY_FINE * DESCRIPTOR_DIMS }, (_, i) => rows[i % Math.max(rows.length, 1)] ?? 0);
    fine.set(toInt8(kMeans(padded, VOCABULARY_FINE, 12)), cell * VOCABULARY_FINE * DESCRIPTOR_DIMS);
    console.error(`cell ${cell + 1}/${VOCABULARY_COARSE}: ${members.length} descriptors`);
  }
  return { coarse, fine };
}

// --- Hamming embedding: seeded orthonormal projection, per-word medians ---------------------------
function trainProjection(): Float32Array {
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const projection = new Float32Array(SIGNATURE_BITS * DESCRIPTOR_DIMS);
  for (let b = 0; b < SIGNATURE_BITS; b++) {
    const row = Float64Array.from({ length: DESCRIPTOR_DIMS }, gaussian);
    for (let p = 0; p < b; p++) {
      let dot = 0;
      for (let d = 0; d < DESCRIPTOR_DIMS; d++) dot += row[d] * projection[p * DESCRIPTOR_DIMS + d];
      for (let d = 0; d < DESCRIPTOR_DIMS; d++) row[d] -= dot * projection[p * DESCRIPTOR_DIMS + d];
    }
    const norm = Math.hypot(...row);
    for (let d = 0; d < DESCRIPTOR_DIMS; d++) projection[b * DESCRIPTOR_DIMS + d] = row[d] / norm;
  }
  return projection;
}

const previous = values["medians-only"] ? vocabulary() : null;
const { coarse, fine } = previous ?? trainCentroids();
const projection = previous?.projection ?? trainProjection();
const partial: Vocabulary = { coarse, fine, projection, medians: new Float32Array(VOCABULARY_WORDS * SIGNATURE_BITS) };
const words = assignWords(data, 1, partial);
const projections = projectDescriptors(data, partial);
const median = (values: number[]) => {
  const sorted = values.sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)];
};
const byWord = Array.from({ length: VOCABULARY_WORDS }, () => [] as number[]);
words.forEach((word, i) => byWord[word].push(i));
const globalMedians = Array.from({ length: SIGNATURE_BITS }, (_, b) => median(Array.from({ length: count }, (_, i) => projections[i * SIGNATURE_BITS + b])));
let sparse = 0;
for (let word = 0; word < VOCABULARY_WORDS; word++) {
  const members = byWord[word];
  if (members.length < 8) sparse++;
  for (let b = 0; b < SIGNATURE_BITS; b++) {
    partial.medians[word * SIGNATURE_BITS + b] =
      members.length < 8 ? globalMedians[b] : median(members.map((i) => projections[i * SIGNATURE_BITS + b]));
  }
}
const target = VOCABULARY_FILE.pathname;
fs.writeFileSync(target, serializeVocabulary(partial));
console.error(`wrote ${target}: ${VOCABULARY_WORDS} words (${sparse} with < 8 training descriptors use global medians), trained on ${path.basename(path.resolve(root))}`);
