/**
 * npm run eval:correspondence -- DIR [--subjects 10] [--tolerance-px 3]
 * Measures the engine's keypoints against the generator's ground truth on a synthetic set made by
 * `npm run synth` (its manifest gives seed, difficulty and counts). For two captures of one nose, a
 * keypoint's true partner is the keypoint of the other capture at the same nose-surface point (within
 * the tolerance, at a scale within 1.5x). Prints, for capture pairs of the same burst and of different
 * bursts: the share of keypoints with a true partner (repeatability), the descriptor cosine of true
 * partners, and how often the true partner is the nearest descriptor (a's frame nearest to the true turn
 * between the captures against b's upright frame, as the matcher's best rotation hypothesis would be);
 * then the cosine of random keypoint pairs of different noses. Nothing is asserted: this says where matching loses genuine pairs.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { decodeNoseImage } from "../lib/biometrics/decode";
import { normaliseContrast } from "../lib/biometrics/enhance";
import { descriptorFrame, extractLocalFeatures } from "../lib/biometrics/features";
import { DESCRIPTOR_ANGLES_DEG, DESCRIPTOR_DIMS, DESCRIPTOR_QUANT } from "../lib/biometrics/parameters";
import { planCapture, surfacePointOf } from "../lib/synth/capture";
import { burstLayout, captureFileName, captureSeed, MANIFEST_FILE, subjectDirName, subjectSeed, type DatasetManifest } from "../lib/synth/dataset";
import { createNoseSubject } from "../lib/synth/nose-surface";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { subjects: { type: "string", default: "10" }, "tolerance-px": { type: "string", default: "3" } },
});
const root = positionals[0];
if (!root) throw new Error("usage: eval:correspondence DIR [--subjects 10] [--tolerance-px 3]");
const manifest = JSON.parse(fs.readFileSync(path.join(root, MANIFEST_FILE), "utf8")) as DatasetManifest;
const toleranceWorkPx = Number(values["tolerance-px"]);
const SCALE_TOLERANCE = Math.log(1.5);

interface Capture {
  subject: number;
  burst: number;
  /** The capture's roll (radians): image = nose surface turned by it. */
  rotation: number;
  /** count x 3: x, y, sigma at the engine's working size. */
  keypoints: Float32Array;
  /** One descriptor array per frame (DESCRIPTOR_ANGLES_DEG), upright first. */
  descriptors: Int8Array[];
  /** count x 3: u, v, coverage on the nose surface. */
  surface: Float32Array;
  /** Working-size pixels per surface unit. */
  pixelsPerUnit: number;
}

async function loadCaptures(subjects: number): Promise<Capture[]> {
  const captures: Capture[] = [];
  for (let s = 0; s < subjects; s++) {
    const seed = subjectSeed(manifest.seed, s);
    const subject = createNoseSubject(seed);
    const bursts = burstLayout(seed, manifest.captures, manifest.difficulty);
    for (let c = 0; c < manifest.captures; c++) {
      const burst = bursts[c];
      const plan = planCapture(subject, captureSeed(seed, c), { difficulty: manifest.difficulty, ...(burst ? { burst } : {}) });
      const file = path.join(root, subjectDirName(s, manifest.subjects), captureFileName(c, manifest.captures));
      const { image } = await decodeNoseImage(fs.readFileSync(file));
      const toCapture = plan.width / image.width;
      const { keypoints, descriptors } = extractLocalFeatures(normaliseContrast(image), image);
      const packed = new Float32Array(keypoints.length * 3);
      const surface = new Float32Array(keypoints.length * 3);
      const frames = DESCRIPTOR_ANGLES_DEG.map((_, set) => descriptorFrame(descriptors, keypoints.length, set));
      keypoints.forEach((k, i) => {
        packed.set([k.x, k.y, k.sigma], i * 3);
        const p = surfacePointOf(plan, (k.x + 0.5) * toCapture - 0.5, (k.y + 0.5) * toCapture - 0.5);
        surface.set([p.u, p.v, p.coverage], i * 3);
      });
      captures.push({ subject: s, burst: burst?.seed ?? c, rotation: plan.rotation, keypoints: packed, descriptors: frames, surface, pixelsPerUnit: plan.pixelsPerUnit / toCapture });
    }
  }
  return captures;
}

/** For each keypoint of a, the keypoint of b at the same surface point and a similar physical scale, or -1. */
function truePartners(a: Capture, b: Capture): Int32Array {
  const countA = a.keypoints.length / 3;
  const countB = b.keypoints.length / 3;
  const partners = new Int32Array(countA).fill(-1);
  const tolerance = toleranceWorkPx / a.pixelsPerUnit;
  for (let i = 0; i < countA; i++) {
    if (a.surface[i * 3 + 2] < 0.5) continue;
    let best = tolerance * tolerance;
    for (let j = 0; j < countB; j++) {
      const du = a.surface[i * 3] - b.surface[j * 3];
      const dv = a.surface[i * 3 + 1] - b.surface[j * 3 + 1];
      const scaleA = a.keypoints[i * 3 + 2] / a.pixelsPerUnit;
      const scaleB = b.keypoints[j * 3 + 2] / b.pixelsPerUnit;
      if (du * du + dv * dv < best && Math.abs(Math.log(scaleA / scaleB)) < SCALE_TOLERANCE) {
        best = du * du + dv * dv;
        partners[i] = j;
      }
    }
  }
  return partners;
}

function cosine(a: Int8Array, i: number, b: Int8Array, j: number): number {
  let dot = 0;
  for (let k = 0; k < DESCRIPTOR_DIMS; k++) dot += a[i * DESCRIPTOR_DIMS + k] * b[j * DESCRIPTOR_DIMS + k];
  return dot / (DESCRIPTOR_QUANT * DESCRIPTOR_QUANT);
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const percent = (part: number, whole: number) => `${((100 * part) / Math.max(1, whole)).toFixed(1)} %`;

const captures = await loadCaptures(Math.min(Number(values.subjects), manifest.subjects));
console.log(`${root}: seed ${manifest.seed}, ${manifest.difficulty}, first ${captures.length / manifest.captures} subjects x ${manifest.captures} captures, tolerance ${toleranceWorkPx} px`);
for (const sameBurst of [true, false]) {
  let pairs = 0;
  let keypoints = 0;
  let partnered = 0;
  let nearest = 0;
  const cosines: number[] = [];
  for (const a of captures) {
    for (const b of captures) {
      if (a === b || a.subject !== b.subject || (a.burst === b.burst) !== sameBurst) continue;
      pairs++;
      const partners = truePartners(a, b);
      const countB = b.keypoints.length / 3;
      // The image is the surface turned by the capture's roll, so a's frame at (a - b roll) sees b's upright frame.
      const turnDeg = ((a.rotation - b.rotation) * 180) / Math.PI;
      const frame = DESCRIPTOR_ANGLES_DEG.reduce((best, angle, set) => (Math.abs(angle - turnDeg) < Math.abs(DESCRIPTOR_ANGLES_DEG[best] - turnDeg) ? set : best), 0);
      const da = a.descriptors[frame];
      const db = b.descriptors[0];
      keypoints += partners.length;
      partners.forEach((j, i) => {
        if (j < 0) return;
        partnered++;
        const c = cosine(da, i, db, j);
        cosines.push(c);
        let closer = false;
        for (let k = 0; k < countB && !closer; k++) closer = k !== j && cosine(da, i, db, k) > c;
        if (!closer) nearest++;
      });
    }
  }
  cosines.sort((x, y) => x - y);
  const cos = [0.1, 0.5, 0.9].map((q) => (cosines.length ? quantile(cosines, q).toFixed(2) : "-")).join(" / ");
  console.log(
    `${sameBurst ? "same burst " : "other burst"}: ${pairs} capture pairs; keypoints with a true partner ${percent(partnered, keypoints)}; ` +
      `their cosine p10 / p50 / p90 ${cos}; true partner is the nearest descriptor ${percent(nearest, partnered)}`,
  );
}
// Reference: descriptors of different noses, paired at random (a fixed sequence, so runs repeat).
const random: number[] = [];
let state = 3;
const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
while (random.length < 20_000) {
  const a = captures[Math.floor(next() * captures.length)];
  const b = captures[Math.floor(next() * captures.length)];
  if (a.subject === b.subject) continue;
  random.push(cosine(a.descriptors[0], Math.floor((next() * a.keypoints.length) / 3), b.descriptors[0], Math.floor((next() * b.keypoints.length) / 3)));
}
random.sort((x, y) => x - y);
console.log(`random keypoints of different noses: cosine p10 / p50 / p90 / p99 ${[0.1, 0.5, 0.9, 0.99].map((q) => quantile(random, q).toFixed(2)).join(" / ")}`);
