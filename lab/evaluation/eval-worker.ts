import fs from "node:fs";
import { parentPort } from "node:worker_threads";
import sharp from "sharp";
import { decodeNoseImage } from "@/lib/biometrics/decode";
import { normaliseContrast } from "@/lib/biometrics/enhance";
import { extractLocalFeatures } from "@/lib/biometrics/features";
import { compareImagePair, identifyAmong } from "@/lib/biometrics/operations";
import { compareTemplates, compareTemplatesInDetail, inlierGenericness } from "@/lib/biometrics/pair-matcher";
import { DESCRIPTOR_DIMS, RERANK_KEYPOINTS } from "@/lib/biometrics/parameters";
import { turnedRow } from "@/lib/biometrics/session-matcher";
import { deserializeTemplate, strongestKeypoints, type NoseTemplate } from "@/lib/biometrics/template";
import { QUARTER_TURNS, quarterTurnViews, turnableFromViews } from "@/lib/biometrics/turns";

/**
 * A stateful evaluation worker: it holds every template of the data set once, so the main thread sends
 * only image indices for the millions of comparisons of the all-impostor protocol.
 */
export type EvalRequest =
  | { kind: "load"; templates: (Uint8Array | null)[]; files?: (string | null)[] }
  | { kind: "turned-sessions"; sessions: { probe: number[]; enrol: number[] }[] }
  | { kind: "pairs"; pairs: Int32Array }
  | { kind: "image-pairs"; pairs: Int32Array }
  | { kind: "pair-details"; pairs: Int32Array }
  | { kind: "identify"; probes: number[][]; gallery: { petId: string; images: number[] }[] }
  | { kind: "upright-descriptors"; files: string[]; limit: number };

let templates: (NoseTemplate | null)[] = [];
/** The JPEG of each image that may be turned (a session's probe images, a single pair's first image), by image index. */
let files: (string | null)[] = [];
/** Each turned image's quarter-turned views (`quarterTurnViews`), computed once: hundreds of sessions or pairs turn each. */
const turnedViews = new Map<number, NoseTemplate[] | null>();

async function viewsOf(index: number): Promise<NoseTemplate[] | null> {
  if (!turnedViews.has(index)) {
    const template = templates[index];
    const file = files[index];
    turnedViews.set(index, template && file ? await quarterTurnViews(fs.readFileSync(file), template) : null);
  }
  return turnedViews.get(index)!;
}

/**
 * Each session's pairs at a quarter turn, as verifyPet tries them for a session it does not accept upright
 * (`turnedRow`): similarity[p][e], 0 where a pair was not matched turned.
 */
async function turnedSessions(sessions: { probe: number[]; enrol: number[] }[]): Promise<number[][][]> {
  const out: number[][][] = [];
  for (const session of sessions) {
    const enrolled = session.enrol.map((i) => templates[i]!);
    const light = enrolled.map((e) => strongestKeypoints(e, RERANK_KEYPOINTS));
    const rows: number[][] = [];
    for (const p of session.probe) {
      const views = await viewsOf(p);
      rows.push(views ? turnedRow(turnableFromViews(views), enrolled, light, QUARTER_TURNS).map((pair) => pair?.similarity ?? 0) : enrolled.map(() => 0));
    }
    out.push(rows);
  }
  return out;
}

/** Each pair's similarity (0 when an image is unusable). */
function comparePairs(pairs: Int32Array): Float64Array {
  const similarity = new Float64Array(pairs.length / 2);
  for (let k = 0; k < similarity.length; k++) {
    const a = templates[pairs[2 * k]];
    const b = templates[pairs[2 * k + 1]];
    similarity[k] = a && b ? compareTemplates(a, b).similarity : 0;
  }
  return similarity;
}

/**
 * Single image pairs as `eval pairs` scores them (`compareImagePair`: a pair not accepted upright also tries its first
 * image's quarter turns): upright and scored raw similarity of each pair, interleaved; 0 when an image has no template.
 */
async function compareImagePairs(pairs: Int32Array): Promise<Float64Array> {
  const out = new Float64Array(pairs.length);
  for (let k = 0; k < pairs.length / 2; k++) {
    const [ia, ib] = [pairs[2 * k], pairs[2 * k + 1]];
    const a = templates[ia];
    const b = templates[ib];
    if (!a || !b) continue;
    const { upright, similarity } = await compareImagePair(a, b, () => viewsOf(ia));
    out[2 * k] = upright;
    out[2 * k + 1] = similarity;
  }
  return out;
}

/** Each pair's full figures and inliers, in the compact row format of `lab/scripts/fusion-study.ts`. */
function comparePairsInDetail(pairs: Int32Array): PairDetailRow[] {
  const rows: PairDetailRow[] = [];
  for (let k = 0; k < pairs.length / 2; k++) {
    const a = templates[pairs[2 * k]];
    const b = templates[pairs[2 * k + 1]];
    if (!a || !b) throw new Error("pair-details needs usable images");
    const { best, hypotheses, inliers } = compareTemplatesInDetail(a, b);
    const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
    rows.push([
      best.inliers, best.tentative, round(best.scale, 4), best.rotationDeg, hypotheses.flatMap((h) => [h.inliers, h.tentative]),
      inliers!.a, inliers!.b, inliers!.cosine.map((c) => round(c, 4)), inliers!.transform.map((v) => round(v, 4)),
      hypotheses.map((h) => h.similarity), inliers!.a.map((k, n) => round(inlierGenericness(a.genericness[k], b.genericness[inliers!.b[n]]), 4)),
    ]);
  }
  return rows;
}

/**
 * inliers, tentative, scale, rotation, [inliers, tentative] per hypothesis, inlier keypoints in a and b, cosines, transform,
 * similarity per hypothesis, inliers' genericness (`inlierGenericness`).
 */
export type PairDetailRow = [number, number, number, number, number[], number[], number[], number[], number[], number[], number[]];

/**
 * Each image's `limit` strongest descriptors in the upright frame, as `npm run train:vocabulary` samples them; null for an
 * image that does not decode or has no features.
 */
async function uprightDescriptors(paths: string[], limit: number): Promise<(Int8Array | null)[]> {
  const out: (Int8Array | null)[] = [];
  for (const file of paths) {
    try {
      const { image: grey } = await decodeNoseImage(fs.readFileSync(file));
      const { descriptors } = extractLocalFeatures(normaliseContrast(grey), grey, 1);
      out.push(descriptors.slice(0, limit * DESCRIPTOR_DIMS));
    } catch {
      out.push(null);
    }
  }
  return out;
}

function usable(indices: number[]): NoseTemplate[] {
  return indices.map((i) => templates[i]).filter((t): t is NoseTemplate => t !== null);
}

async function handle(request: EvalRequest): Promise<unknown> {
  switch (request.kind) {
    case "load":
      templates = request.templates.map((bytes) => (bytes ? deserializeTemplate(bytes) : null));
      files = request.files ?? [];
      turnedViews.clear();
      return templates.length;
    case "turned-sessions":
      return turnedSessions(request.sessions);
    case "pairs":
      return comparePairs(request.pairs);
    case "image-pairs":
      return compareImagePairs(request.pairs);
    case "pair-details":
      return comparePairsInDetail(request.pairs);
    case "upright-descriptors":
      return uprightDescriptors(request.files, request.limit);
    case "identify": {
      const gallery = request.gallery.map((pet) => ({ petId: pet.petId, templates: usable(pet.images) }));
      // Each probe set's usable images' turned views, made for the cascade's turned pass only (decision 0029).
      const views = (n: number) => Promise.all(request.probes[n].filter((i) => templates[i] !== null).map(viewsOf));
      return identifyAmong(request.probes.map(usable), gallery, views);
    }
  }
}

sharp.concurrency(1);
parentPort?.on("message", async (message: { id: number; request: EvalRequest }) => {
  try {
    parentPort!.postMessage({ id: message.id, result: await handle(message.request) });
  } catch (error) {
    parentPort!.postMessage({ id: message.id, error: (error as Error).message });
  }
});
