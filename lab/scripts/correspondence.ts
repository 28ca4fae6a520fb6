/**
 * npm run eval:correspondence -- DIR [--subjects 10] [--first-subject 0] [--tolerance-px 3] [--descriptor-net FILE]
 * Measures the engine's keypoints against the generator's ground truth (lab/scripts/ground-truth.ts) on a synthetic
 * set made by `npm run synth`. Prints, for capture pairs of the same burst and of different bursts: the share of
 * keypoints with a true partner (repeatability), the descriptor cosine of true partners, and how often the true
 * partner is the nearest descriptor (a's frame nearest to the true turn between the captures against b's upright
 * frame, as the matcher's best rotation hypothesis would be); then the cosine of random keypoint pairs of
 * different noses. With --descriptor-net, the descriptors are a learned network's (lib/biometrics/descriptor-net.ts,
 * trained by `npm run train:descriptor`) on the same keypoints and frames instead of the engine's.
 * Nothing is asserted: this says where matching loses genuine pairs.
 */
import fs from "node:fs";
import { parseScriptArgs } from "@/scripts/script-cli";
import { parseDescriptorNet } from "@/lib/biometrics/descriptor-net";
import { DESCRIPTOR_DIMS, DESCRIPTOR_QUANT } from "@/lib/biometrics/parameters";
import { loadSubjectCaptures, nearestFrame, readManifest, trueTurnDeg, truePartners, type GroundTruthCapture } from "./ground-truth";

const { positionals, values } = parseScriptArgs({
  name: "eval:correspondence",
  description: "The engine's keypoints against the generator's ground truth: repeatability and descriptor nearest-neighbour rate across captures.",
  args: "DIR",
  options: {
    subjects: { type: "string", default: "10" },
    "first-subject": { type: "string", default: "0" },
    "tolerance-px": { type: "string", default: "3" },
    "descriptor-net": { type: "string" },
  },
});
const root = positionals[0];
if (!root) throw new Error("usage: eval:correspondence DIR [--subjects 10] [--first-subject 0] [--tolerance-px 3] [--descriptor-net FILE]");
const manifest = readManifest(root);
const toleranceWorkPx = Number(values["tolerance-px"]);
const net = values["descriptor-net"] ? parseDescriptorNet(fs.readFileSync(values["descriptor-net"])) : null;
if (net && net.outputs !== DESCRIPTOR_DIMS) throw new Error(`the network gives ${net.outputs} dimensions, the engine's descriptors ${DESCRIPTOR_DIMS}`);

async function loadCaptures(first: number, count: number): Promise<GroundTruthCapture[]> {
  const captures: GroundTruthCapture[] = [];
  for (let s = first; s < Math.min(first + count, manifest.subjects); s++) {
    captures.push(...(await loadSubjectCaptures(root, manifest, s, { net: net ?? undefined })));
  }
  return captures;
}

function cosine(a: Int8Array, i: number, b: Int8Array, j: number): number {
  let dot = 0;
  for (let k = 0; k < DESCRIPTOR_DIMS; k++) dot += a[i * DESCRIPTOR_DIMS + k] * b[j * DESCRIPTOR_DIMS + k];
  return dot / (DESCRIPTOR_QUANT * DESCRIPTOR_QUANT);
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const percent = (part: number, whole: number) => `${((100 * part) / Math.max(1, whole)).toFixed(1)} %`;

const first = Number(values["first-subject"]);
const captures = await loadCaptures(first, Number(values.subjects));
console.log(
  `${root}: seed ${manifest.seed}, ${manifest.difficulty}, subjects ${first}-${first + captures.length / manifest.captures - 1} x ${manifest.captures} captures, ` +
    `tolerance ${toleranceWorkPx} px, descriptors: ${values["descriptor-net"] ?? "the engine's"}`,
);
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
      const partners = truePartners(a, b, toleranceWorkPx);
      const da = a.descriptors[nearestFrame(trueTurnDeg(a, b))];
      const db = b.descriptors[0];
      keypoints += partners.length;
      partners.forEach((j, i) => {
        if (j < 0) return;
        partnered++;
        const c = cosine(da, i, db, j);
        cosines.push(c);
        let closer = false;
        for (let k = 0; k < b.keypoints.length && !closer; k++) closer = k !== j && cosine(da, i, db, k) > c;
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
  random.push(cosine(a.descriptors[0], Math.floor(next() * a.keypoints.length), b.descriptors[0], Math.floor(next() * b.keypoints.length)));
}
random.sort((x, y) => x - y);
console.log(`random keypoints of different noses: cosine p10 / p50 / p90 / p99 ${[0.1, 0.5, 0.9, 0.99].map((q) => quantile(random, q).toFixed(2)).join(" / ")}`);
