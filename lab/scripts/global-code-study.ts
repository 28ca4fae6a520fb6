/**
 * npm run eval:global-code -- [--settings hard,real,real-soft] [--sizes 1000,10000,100000] [--genuine 50]
 * npm run eval:global-code -- --cache FILE [--sizes ...] [--genuine 100]
 * Could a compact code per image narrow the 1:N first stage at scale? On the identification bench's templates (its
 * probe settings' enrolled subjects, galleries topped up with distractor pets mixed from its pool of 600 templates, as
 * the bench mixes them), or on a `npm run bench:search` cache (`--cache`: its first `--genuine` subjects enrolled with
 * captures 0–4 and probed with 5–7, distractor pets mixed from the other subjects' captures 0–4, so that distractors
 * are of the probes' own setting, as the bench's pool is not), each image gets a VLAD code: its upright descriptors' residuals to the vocabulary's 64 coarse
 * centroids, each cell's sum normalised, square-rooted with its sign, the whole normalised (4,096 values). A probe
 * image is coded in its MATCHED_SETS frames and meets an enrolled image at the best of them; a pet scores as the first
 * stage scores it (per probe image the mean of its two best images, then the mean of its two best probe images). For
 * each size it prints how often the true pet ranks within each depth by the code and by the first stage (all five
 * frames, as the deep pass ranks). 4,096 float values an image are no compact code (100,000 pets' would take 8 GB): this
 * measures the ranking such a code can give at most; `--dims N` projects it on N random axes, a compact code's size
 * without a learned compression; `--whiten N` (with `--cache`) PCA-whitens it to N values, learned on the other subjects'
 * captures 5–7 (images of neither the enrolled pets nor the distractors). Prints figures only.
 */
import os from "node:os";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { distractorMix, prepareTemplates, type ProbeSetting } from "../bench/identification";
import { Rng } from "../synth/prng";
import { Gallery } from "@/lib/biometrics/gallery";
import { packPets } from "@/lib/biometrics/packed-pets";
import { DESCRIPTOR_DIMS, DESCRIPTOR_SETS, MATCHED_SETS, VOCABULARY_COARSE } from "@/lib/biometrics/parameters";
import { deserializeTemplate, descriptorSet, descriptorSetCount, searchKeyOfTemplate, type NoseTemplate } from "@/lib/biometrics/template";
import { vocabulary } from "@/lib/biometrics/visual-words";
import { readSubjectCache } from "../evaluation/subject-cache";
import { symmetricEigen } from "../evaluation/symmetric-eigen";

const { values } = parseScriptArgs({
  name: "eval:global-code",
  description: "How often a VLAD code per image ranks the true pet within each depth at scale, against the 1:N first stage.",
  options: {
    settings: { type: "string", default: "hard,real,real-soft" },
    sizes: { type: "string", default: "1000,10000,100000" },
    genuine: { type: "string", default: "50" },
    cache: { type: "string" },
    // A compact code: the VLAD code projected on this many random orthonormal-ish (Gaussian) axes and normalised again.
    dims: { type: "string" },
    // A learned compact code (with --cache): PCA-whitening to this many values, trained on the other subjects' captures 5–7.
    whiten: { type: "string" },
  },
});
const DEPTHS = [16, 384, 1000, 5000];
const FIRST_STAGE_LIMIT = 1000;
const CODE = VOCABULARY_COARSE * DESCRIPTOR_DIMS;
const coarse = vocabulary().coarse;

/** The VLAD code of one frame's descriptors (count x DESCRIPTOR_DIMS int8). */
function vlad(descriptors: Int8Array): Float32Array {
  const code = new Float32Array(CODE);
  for (let at = 0; at < descriptors.length; at += DESCRIPTOR_DIMS) {
    let best = 0;
    let bestDistance = Infinity;
    for (let c = 0; c < VOCABULARY_COARSE; c++) {
      let distance = 0;
      for (let k = 0; k < DESCRIPTOR_DIMS; k++) {
        const d = descriptors[at + k] - coarse[c * DESCRIPTOR_DIMS + k];
        distance += d * d;
      }
      if (distance < bestDistance) [best, bestDistance] = [c, distance];
    }
    for (let k = 0; k < DESCRIPTOR_DIMS; k++) code[best * DESCRIPTOR_DIMS + k] += descriptors[at + k] - coarse[best * DESCRIPTOR_DIMS + k];
  }
  for (let c = 0; c < VOCABULARY_COARSE; c++) {
    let norm = 0;
    for (let k = 0; k < DESCRIPTOR_DIMS; k++) norm += code[c * DESCRIPTOR_DIMS + k] ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let k = 0; k < DESCRIPTOR_DIMS; k++) code[c * DESCRIPTOR_DIMS + k] /= norm;
  }
  let norm = 0;
  for (let i = 0; i < CODE; i++) {
    code[i] = Math.sign(code[i]) * Math.sqrt(Math.abs(code[i]));
    norm += code[i] ** 2;
  }
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < CODE; i++) code[i] /= norm;
  return code;
}

/** A compression of the code: each value is the code (less `mean`, if any) on one of the axes (values x CODE, row-major). */
interface Compression {
  axes: Float32Array;
  mean: Float32Array | null;
}

/** With `--dims`: random Gaussian axes (seeded); with `--whiten`: learned for each set (`learnWhitening`). */
let compression: Compression | null = values.dims
  ? (() => {
      const rng = new Rng(4242);
      return { axes: Float32Array.from({ length: Number(values.dims) * CODE }, () => rng.normal()), mean: null };
    })()
  : null;

/**
 * PCA-whitening learned from training codes: the mean, and the `dims` leading principal axes each divided by the square
 * root of its variance (by the Gram matrix of the centred codes, as there are fewer codes than values).
 */
function learnWhitening(codes: readonly Float32Array[], dims: number): Compression {
  const n = codes.length;
  const mean = new Float32Array(CODE);
  for (const c of codes) for (let i = 0; i < CODE; i++) mean[i] += c[i] / n;
  const centred = codes.map((c) => Float32Array.from(c, (x, i) => x - mean[i]));
  const gram = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = i; j < n; j++) gram[i * n + j] = gram[j * n + i] = dot(centred[i], centred[j]);
  const { values: eigenvalues, vectors } = symmetricEigen(gram, n);
  const order = [...eigenvalues.keys()].slice(0, Math.min(dims, n - 1));
  const axes = new Float32Array(order.length * CODE);
  order.forEach((e, d) => {
    // The axis X^T u / sqrt(λ) has unit length; whitened, it is divided by sqrt(λ / n) again.
    const scale = 1 / Math.sqrt(Math.max(eigenvalues[e], 1e-12)) / Math.sqrt(Math.max(eigenvalues[e] / n, 1e-12));
    for (let i = 0; i < n; i++) {
      const u = vectors[i * n + e] * scale;
      for (let k = 0; k < CODE; k++) axes[d * CODE + k] += u * centred[i][k];
    }
  });
  return { mean, axes };
}

/** The code as compared: the VLAD code, or its compression (normalised again). */
function code(descriptors: Int8Array): Float32Array {
  const full = vlad(descriptors);
  if (!compression) return full;
  const { axes, mean } = compression;
  const centred = mean ? Float32Array.from(full, (x, i) => x - mean[i]) : full;
  const out = new Float32Array(axes.length / CODE);
  for (let d = 0; d < out.length; d++) out[d] = dot(axes.subarray(d * CODE, (d + 1) * CODE), centred);
  const norm = Math.sqrt(dot(out, out)) || 1;
  return out.map((x) => x / norm);
}

const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
};
/** The first stage's rule: the mean of the two best values (one value: itself). */
const meanOfTwoBest = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => b - a).slice(0, 2);
  return sorted.reduce((sum, v) => sum + v, 0) / sorted.length;
};
const probeCodes = (template: NoseTemplate) =>
  Array.from({ length: Math.min(MATCHED_SETS, descriptorSetCount(template)) }, (_, set) => code(descriptorSet(template, set)));
/** A probe image against an enrolled image: the best of its frames. */
const imageScore = (frames: readonly Float32Array[], enrolled: Float32Array) => Math.max(...frames.map((frame) => dot(frame, enrolled)));

/** A set's enrolled subjects (serialised templates) and the pool its distractor pets are mixed from. */
interface StudySet {
  name: string;
  subjects: { enrol: Uint8Array[]; probe: Uint8Array[] }[];
  pool: Uint8Array[];
  /** Images of neither the enrolled subjects nor the pool: what a learned compression is trained on. */
  training: Uint8Array[];
}

/** A bench:search cache: the first `genuine` subjects enrolled and probed, the others' enrolments the pool. */
function cacheSet(file: string, genuine: number): StudySet {
  const bytes = readSubjectCache(file).map((captures) => captures.map((b64) => (b64 ? new Uint8Array(Buffer.from(b64, "base64")) : null)));
  const usable = (list: (Uint8Array | null)[]) => list.filter((t): t is Uint8Array => t !== null);
  const subjects = bytes
    .slice(0, genuine)
    .map((captures) => ({ enrol: usable(captures.slice(0, 5)), probe: usable(captures.slice(5)) }))
    .filter((subject) => subject.enrol.length >= 2 && subject.probe.length >= 2);
  const others = bytes.slice(genuine);
  return { name: path.basename(file), subjects, pool: others.flatMap((captures) => usable(captures.slice(0, 5))), training: others.flatMap((captures) => usable(captures.slice(5))) };
}

async function benchSet(setting: ProbeSetting, genuine: number): Promise<StudySet> {
  const { subjects, pool } = await prepareTemplates({
    genuine,
    strangers: 0,
    settings: [setting],
    distractorSubjects: 300,
    difficulty: "normal",
    cacheDir: path.join(os.tmpdir(), "rhinarium-bench-cache"),
    log: () => {},
  });
  return { name: setting, subjects: subjects.slice(0, genuine), pool, training: [] };
}

const sizes = values.sizes.split(",").map(Number);
const sets: StudySet[] = [];
if (values.cache) sets.push(cacheSet(values.cache, Number(values.genuine)));
else for (const setting of values.settings.split(",") as ProbeSetting[]) sets.push(await benchSet(setting, Number(values.genuine)));
for (const { name, subjects, pool, training } of sets) {
  if (values.whiten) {
    if (training.length === 0) throw new Error("--whiten needs --cache: its other subjects' captures 5-7 are the training images");
    compression = learnWhitening(training.map((bytes) => vlad(descriptorSet(deserializeTemplate(bytes), 0))), Number(values.whiten));
  }
  const started = performance.now();
  const poolCodes = pool.map((bytes) => code(descriptorSet(deserializeTemplate(bytes), 0)));
  const enrolCodes = subjects.map((subject) => subject.enrol.map((bytes) => code(descriptorSet(deserializeTemplate(bytes), 0))));
  const codeMs = (performance.now() - started) / (pool.length + enrolCodes.flat().length);
  const probes = subjects.map((subject) => subject.probe.map((bytes) => probeCodes(deserializeTemplate(bytes))));
  // Each probe image against every pool image and every enrolled subject's images, once.
  const poolScores = probes.map((images) => images.map((frames) => Float64Array.from(poolCodes, (code) => imageScore(frames, code))));
  const petScore = (s: number, imageScores: (p: number) => number[]) => meanOfTwoBest(probes[s].map((_, p) => meanOfTwoBest(imageScores(p))));
  const realScores = subjects.map((_, s) => enrolCodes.map((codes) => petScore(s, (p) => codes.map((code) => imageScore(probes[s][p], code)))));
  const compressed = !compression ? "" : values.whiten ? `, the code PCA-whitened to ${compression.axes.length / CODE} values (trained on ${training.length} other images)` : `, the code projected to ${values.dims} values`;
  console.log(`\n${name}${compressed}: ${subjects.length} probes, a pool of ${pool.length} distractor images; a code ${codeMs.toFixed(1)} ms`);
  console.log("| pets | true pet within 16 / 384 / 1,000 / 5,000 by the code | within 16 / 384 / 1,000 by the first stage (all frames) |");
  console.log("| --- | --- | --- |");
  for (const size of sizes) {
    const rng = new Rng(size);
    const mixes = Array.from({ length: Math.max(0, size - subjects.length) }, () => distractorMix(rng, pool.length));
    // The code: each probe's rank of its own pet among the real pets and the distractors.
    const codeRanks = subjects.map((_, s) => {
      const own = realScores[s][s];
      let above = realScores[s].filter((score, other) => other !== s && score > own).length;
      for (const mix of mixes) if (petScore(s, (p) => Array.from(mix, (i) => poolScores[s][p][i])) > own) above++;
      return above + 1;
    });
    // The first stage on the same gallery.
    const gallery = new Gallery();
    gallery.upsertMany(packPets(subjects.map((subject, s) => ({ petId: `real-${s}`, templates: subject.enrol.map(searchKeyOfTemplate) }))));
    const poolKeys = pool.map(searchKeyOfTemplate);
    for (let from = 0; from < mixes.length; from += 5000) {
      gallery.upsertMany(packPets(mixes.slice(from, from + 5000).map((mix, i) => ({ petId: `d-${from + i}`, templates: Array.from(mix, (m) => poolKeys[m]) }))));
    }
    const stageRanks = subjects.map((subject, s) => {
      const at = gallery.shortlist(subject.probe.map(deserializeTemplate), FIRST_STAGE_LIMIT, DESCRIPTOR_SETS).petIds.indexOf(`real-${s}`);
      return at < 0 ? Infinity : at + 1;
    });
    gallery.dispose();
    const within = (ranks: number[], depth: number) => `${((100 * ranks.filter((rank) => rank <= depth).length) / ranks.length).toFixed(0)} %`;
    console.log(
      `| ${size.toLocaleString("en-US")} | ${DEPTHS.map((d) => within(codeRanks, d)).join(" / ")} | ${DEPTHS.filter((d) => d <= FIRST_STAGE_LIMIT).map((d) => within(stageRanks, d)).join(" / ")} |`,
    );
  }
}
