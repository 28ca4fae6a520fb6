import { parentPort } from "node:worker_threads";
import sharp from "sharp";
import { identifyAmong } from "@/lib/biometrics/operations";
import { compareTemplates, compareTemplatesInDetail, inlierGenericness } from "@/lib/biometrics/pair-matcher";
import { deserializeTemplate, type NoseTemplate } from "@/lib/biometrics/template";

/**
 * A stateful evaluation worker: it holds every template of the data set once, so the main thread sends
 * only image indices for the millions of comparisons of the all-impostor protocol.
 */
export type EvalRequest =
  | { kind: "load"; templates: (Uint8Array | null)[] }
  | { kind: "pairs"; pairs: Int32Array }
  | { kind: "pair-details"; pairs: Int32Array }
  | { kind: "identify"; probes: number[][]; gallery: { petId: string; images: number[] }[] };

let templates: (NoseTemplate | null)[] = [];

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

function usable(indices: number[]): NoseTemplate[] {
  return indices.map((i) => templates[i]).filter((t): t is NoseTemplate => t !== null);
}

function handle(request: EvalRequest): unknown | Promise<unknown> {
  switch (request.kind) {
    case "load":
      templates = request.templates.map((bytes) => (bytes ? deserializeTemplate(bytes) : null));
      return templates.length;
    case "pairs":
      return comparePairs(request.pairs);
    case "pair-details":
      return comparePairsInDetail(request.pairs);
    case "identify": {
      const gallery = request.gallery.map((pet) => ({ petId: pet.petId, templates: usable(pet.images) }));
      return identifyAmong(request.probes.map(usable), gallery);
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
