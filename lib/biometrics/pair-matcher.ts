import {
  AFFINE_MIN_INLIERS,
  BURST_REFILL_ROUNDS,
  DESCRIPTOR_ANGLES_DEG,
  DESCRIPTOR_DIMS,
  DESCRIPTOR_QUANT,
  GEOMETRY_MAX_SCALE,
  GEOMETRY_MIN_SCALE,
  GEOMETRY_POSITION_TOLERANCE_PX,
  GEOMETRY_POSITION_TOLERANCE_RELATIVE,
  GEOMETRY_REFIT_TOLERANCE_PX,
  GEOMETRY_SCALE_TOLERANCE,
  GENERICNESS_EXPONENT,
  GENERICNESS_REFERENCE,
  MATCH_MIN_COSINE,
  MATCHED_SETS,
  MATCH_RATIO,
} from "./parameters";
import { burstinessFactor, selfSimilarity } from "./burstiness";
import { distinctivenessFactor, GENERICNESS_MAX } from "./distinctiveness";
import { blockNeighbours, INT32_MIN, type FrameNeighbours } from "./simd/dot-kernel";
import { nativeKernels, nativeVariant } from "./simd/native-kernels";
import { descriptorSet, KEYPOINT_FIELDS, keypointCount, type NoseTemplate } from "./template";

/** What one image-to-image comparison found; `similarity` is the raw figure that scores calibrate. */
export interface PairComparison {
  /** Descriptor matches passing the similarity and ratio tests. */
  tentative: number;
  /** Matches consistent with one plausible transform between the two images. */
  inliers: number;
  /** The inliers weighted by how alike and how distinctive their descriptors are (`inlierWeight`), summed, to 0.1. */
  similarity: number;
  /** Scale of the fitted transform (b relative to a), 0 when no transform was found. */
  scale: number;
  /** The rotation hypothesis that won (degrees, b relative to a; ROTATION_HYPOTHESES). */
  rotationDeg: number;
}

interface TentativeMatches {
  count: number;
  a: Int32Array;
  b: Int32Array;
  cosine: Float32Array;
}

const COSINE_SCALE = DESCRIPTOR_QUANT * DESCRIPTOR_QUANT;

/**
 * What one inlier adds to a pair's similarity: ((cosine − MATCH_MIN_COSINE) / (1 − MATCH_MIN_COSINE))², 0 at the
 * tentative-match floor, 1 for identical descriptors, times `distinctivenessFactor` of the inlier's genericness g
 * in [0, 1] to GENERICNESS_EXPONENT (`inlierGenericness`; 1 for a typical keypoint, less for generic ones). At equal
 * inlier counts, genuine pairs' inliers are the closer ones; an impostor's geometry-consistent matches sit near the floor (docs/engine.md, "Session fusion") or on
 * structure every nose shares (docs/engine.md, format 9).
 */
export function inlierWeight(cosine: number, genericness = GENERICNESS_REFERENCE): number {
  const likeness = Math.max(0, (cosine - MATCH_MIN_COSINE) / (1 - MATCH_MIN_COSINE)) ** 2;
  return likeness * distinctivenessFactor(genericness, GENERICNESS_EXPONENT);
}

/** An inlier is as generic as the more generic of its two keypoints (bytes of `NoseTemplate.genericness`), in [0, 1]. */
export function inlierGenericness(byteA: number, byteB: number): number {
  return Math.max(byteA, byteB) / GENERICNESS_MAX;
}
const burstWeights = new WeakMap<NoseTemplate, Float32Array>();

/**
 * `burstinessFactor` of each keypoint of a template, from its upright descriptors (computed once per template
 * object): 0 for a keypoint repeated across its own image, such as a periodic backdrop's, 1 for a nose's. An inlier
 * counts the smaller factor of its two keypoints; a tentative match with a factor 0 is dropped before geometry.
 */
export function keypointBurstWeights(template: NoseTemplate): Float32Array {
  let weights = burstWeights.get(template);
  if (!weights) {
    // With the refill at extraction every kept keypoint is unique in its template (self-similarity ≤
    // BURST_REFILL_DROP ≤ BURSTINESS_FULL, features.ts), so each factor is 1 and the pass is skipped.
    weights =
      BURST_REFILL_ROUNDS > 0
        ? new Float32Array(keypointCount(template)).fill(1)
        : selfSimilarity(descriptorSet(template, 0), template.keypoints, KEYPOINT_FIELDS).map(burstinessFactor);
    burstWeights.set(template, weights);
  }
  return weights;
}

/**
 * A rotation hypothesis: a's descriptors in frame `setA` against b's in frame `setB`, so that b is taken to be
 * turned by DESCRIPTOR_ANGLES_DEG[setB] − DESCRIPTOR_ANGLES_DEG[setA] relative to a. A half-step hypothesis reads a's
 * descriptors halfway between its upright frame and `setA` (`halfStepFrame`): its angle is half of setA's.
 */
export interface RotationHypothesis {
  setA: number;
  setB: number;
  halfStep: boolean;
  rotationDeg: number;
}

function hypothesis(setA: number, setB: number, halfStep = false): RotationHypothesis {
  const angleA = DESCRIPTOR_ANGLES_DEG[setA] * (halfStep ? 0.5 : 1);
  // 0 + 0 (not 0 − 0 written as −0): the upright hypothesis is +0.
  return { setA, setB, halfStep, rotationDeg: DESCRIPTOR_ANGLES_DEG[setB] - angleA + 0 };
}

const matchedAngles = DESCRIPTOR_ANGLES_DEG.slice(0, MATCHED_SETS);
const mostTurned = matchedAngles.indexOf(Math.max(...matchedAngles));
const leastTurned = matchedAngles.indexOf(Math.min(...matchedAngles));

/**
 * Every matched frame of a (MATCHED_SETS: 0, ± 20°) against b's upright frame, then a's two outer frames against b's
 * opposite ones (± 40°): two captures of a hard set turn by up to ± 60° relative to each other, and the sessions whose
 * every image pair turned by more than 30° were the most failed genuine sessions (docs/engine.md, `npm run eval:turns`).
 * Then the half steps (± 10°, ± 30°): a's frames halfway to ± 20° against b's upright and opposite frames. The
 * descriptor holds a frame for about ± 5°, not ± 10°: halfway between two frames, real-s600's genuine pairs of another
 * burst were accepted at 40 for 54 % against 78 % at a frame's own angle (`npm run eval:factors`, decision 0022).
 * No hypothesis needs more extraction, only more descriptor passes per pair.
 */
export const ROTATION_HYPOTHESES: readonly RotationHypothesis[] = [
  ...matchedAngles.map((_, set) => hypothesis(set, 0)),
  hypothesis(mostTurned, leastTurned),
  hypothesis(leastTurned, mostTurned),
  hypothesis(leastTurned, 0, true),
  hypothesis(mostTurned, 0, true),
  hypothesis(leastTurned, mostTurned, true),
  hypothesis(mostTurned, leastTurned, true),
];
/**
 * The hypotheses of whole frames (0°, ± 20°, ± 40°) come first. The 1:N cascade's light comparison, which only orders
 * candidates for full matching, reads these alone: the half steps would nearly double its cost, and on the one
 * hard-protocol probe its ranking lost they did not change its light similarity (decision 0024).
 */
export const WHOLE_FRAME_HYPOTHESES = ROTATION_HYPOTHESES.findIndex((h) => h.halfStep);

const halfStepFrames = new WeakMap<NoseTemplate, Map<number, Int8Array>>();

/**
 * A template's descriptors halfway between its upright frame and frame `set`: each keypoint's two descriptors summed,
 * scaled back to unit length and quantised (computed once per template object and frame). The descriptor turns
 * smoothly with its frame, so the sum of two frames 20° apart stands in for the frame between them.
 */
export function halfStepFrame(template: NoseTemplate, set: number): Int8Array {
  let frames = halfStepFrames.get(template);
  if (!frames) halfStepFrames.set(template, (frames = new Map()));
  let out = frames.get(set);
  if (!out) {
    const upright = descriptorSet(template, 0);
    const turned = descriptorSet(template, set);
    out = new Int8Array(upright.length);
    for (let k = 0; k < upright.length; k += DESCRIPTOR_DIMS) {
      let norm = 0;
      for (let d = k; d < k + DESCRIPTOR_DIMS; d++) norm += (upright[d] + turned[d]) ** 2;
      const scale = norm > 0 ? DESCRIPTOR_QUANT / Math.sqrt(norm) : 0;
      for (let d = k; d < k + DESCRIPTOR_DIMS; d++) out[d] = Math.round((upright[d] + turned[d]) * scale);
    }
    frames.set(set, out);
  }
  return out;
}

/** The frames a half-step hypothesis reads halfway to, in the order `neighboursOfHypotheses` places them after a's own. */
const halfStepSets = [...new Set(ROTATION_HYPOTHESES.filter((h) => h.halfStep).map((h) => h.setA))];
const matchedFrames = Array.from({ length: MATCHED_SETS }, (_, set) => set);

/**
 * Nearest-neighbour figures for every hypothesis, in ROTATION_HYPOTHESES order, in one pass over the kernel: a's
 * matched frames (and the half-step frames the hypotheses need) against b's. A probe image compared with many images
 * is widened into kernel memory once (`blockNeighbours`).
 */
function neighboursOfHypotheses(a: NoseTemplate, b: NoseTemplate, count = ROTATION_HYPOTHESES.length): FrameNeighbours[] {
  const hypotheses = ROTATION_HYPOTHESES.slice(0, count);
  const halfSteps = hypotheses.some((h) => h.halfStep) ? halfStepSets : [];
  const aBlocks = [...matchedFrames.map((set) => descriptorSet(a, set)), ...halfSteps.map((set) => halfStepFrame(a, set))];
  const bBlocks = matchedFrames.map((set) => descriptorSet(b, set));
  const pairs = hypotheses.map((h) => [h.halfStep ? MATCHED_SETS + halfSteps.indexOf(h.setA) : h.setA, h.setB] as const);
  return blockNeighbours(aBlocks, bBlocks, pairs, DESCRIPTOR_DIMS);
}

/**
 * The arrays findTentativeMatches fills, reused from one hypothesis to the next: a hypothesis is done with its matches
 * (compareUnderHypothesis) before the next one's are found, and allocating three arrays each time was a tenth of a
 * light comparison's time.
 */
const matchArrays = (size: number) => ({ a: new Int32Array(size), b: new Int32Array(size), cosine: new Float32Array(size) });
let tentativeArrays = matchArrays(512);

/**
 * Nearest neighbour in b's descriptors (one frame) for each of a's descriptors in one frame, kept when mutual,
 * close, and clearly better than the runner-up. The matches live in shared arrays until the next call.
 */
function findTentativeMatches(countA: number, frame: FrameNeighbours, burstA: Float32Array, burstB: Float32Array): TentativeMatches {
  const { rowBest, rowSecond, rowIndex, columnRow } = frame;
  if (tentativeArrays.a.length < countA) tentativeArrays = matchArrays(2 * countA);
  const { a: matchA, b: matchB, cosine } = tentativeArrays;
  const minDot = MATCH_MIN_COSINE * COSINE_SCALE;
  const ratioSq = MATCH_RATIO * MATCH_RATIO;
  let count = 0;
  for (let i = 0; i < countA; i++) {
    const best = rowBest[i];
    const bestIndex = rowIndex[i];
    // Mutual nearest neighbours only: bead texture repeats, and one-way matches are mostly chance.
    if (bestIndex < 0 || best < minDot || columnRow[bestIndex] !== i) continue;
    // Squared distances of unit vectors: 2 - 2cos.
    const bestDistance = 2 - (2 * best) / COSINE_SCALE;
    const secondDistance = rowSecond[i] === INT32_MIN ? 2 : 2 - (2 * rowSecond[i]) / COSINE_SCALE;
    if (bestDistance > ratioSq * secondDistance) continue;
    // A keypoint repeated across its own image (a periodic backdrop) is no evidence: it takes no part in geometry.
    if (burstA[i] === 0 || burstB[bestIndex] === 0) continue;
    matchA[count] = i;
    matchB[count] = bestIndex;
    cosine[count] = best / COSINE_SCALE;
    count++;
  }
  return { count, a: matchA, b: matchB, cosine };
}

/** Affine map x' = m00 x + m01 y + tx, y' = m10 x + m11 y + ty. */
interface Affine {
  m00: number;
  m01: number;
  m10: number;
  m11: number;
  tx: number;
  ty: number;
}

const LOG_SCALE_TOLERANCE = Math.log(GEOMETRY_SCALE_TOLERANCE);

/** Each tentative match's scale (b over a), its log and the keypoint positions, read once a comparison (reused arrays). */
const anchorArrays = (size: number) => ({
  scales: new Float64Array(size),
  logScales: new Float64Array(size),
  ax: new Float64Array(size),
  ay: new Float64Array(size),
  bx: new Float64Array(size),
  by: new Float64Array(size),
});
let anchorData = anchorArrays(64);

/**
 * The matches that agree with anchor `m`'s prediction of where each a keypoint lies in b (by the anchor's scale and
 * the hypothesis' rotation, given as its cosine and sine); counted, and listed in `into` when given.
 */
function agreeingWithAnchor(m: number, count: number, cosRotation: number, sinRotation: number, into?: number[]): number {
  const { scales, logScales, ax, ay, bx, by } = anchorData;
  const scale = scales[m];
  const cos = scale * cosRotation;
  const sin = scale * sinRotation;
  const logScale = logScales[m];
  let agreeing = 0;
  for (let n = 0; n < count; n++) {
    if (Math.abs(logScales[n] - logScale) > LOG_SCALE_TOLERANCE) continue;
    const dx = ax[n] - ax[m];
    const dy = ay[n] - ay[m];
    const px = bx[m] + cos * dx - sin * dy;
    const py = by[m] + sin * dx + cos * dy;
    const tolerance = GEOMETRY_POSITION_TOLERANCE_PX + GEOMETRY_POSITION_TOLERANCE_RELATIVE * scale * Math.sqrt(dx * dx + dy * dy);
    const ex = px - bx[n];
    const ey = py - by[n];
    if (ex * ex + ey * ey <= tolerance * tolerance) {
      agreeing++;
      into?.push(n);
    }
  }
  return agreeing;
}

/** The first anchor with the most matches agreeing with it (-1 for none), in JavaScript. */
function firstBestAnchor(count: number, cosRotation: number, sinRotation: number): number {
  let bestAnchor = -1;
  let bestCount = 0;
  for (let m = 0; m < count; m++) {
    const agreeing = agreeingWithAnchor(m, count, cosRotation, sinRotation);
    if (agreeing > bestCount) {
      bestCount = agreeing;
      bestAnchor = m;
    }
  }
  return bestAnchor;
}

/**
 * Each tentative match alone predicts a similarity transform (its keypoints' position and scale, and the
 * hypothesis' rotation). The anchor whose prediction the most other matches agree with wins: a one-point
 * RANSAC that is exhaustive, hence deterministic.
 */
function bestAnchorInliers(a: NoseTemplate, b: NoseTemplate, matches: TentativeMatches, rotation: number): number[] {
  const ka = a.keypoints;
  const kb = b.keypoints;
  const count = matches.count;
  if (anchorData.ax.length < count) anchorData = anchorArrays(2 * count);
  const { scales, logScales, ax, ay, bx, by } = anchorData;
  for (let n = 0; n < count; n++) {
    const ja = matches.a[n] * KEYPOINT_FIELDS;
    const jb = matches.b[n] * KEYPOINT_FIELDS;
    scales[n] = kb[jb + 2] / ka[ja + 2];
    logScales[n] = Math.log(scales[n]);
    ax[n] = ka[ja];
    ay[n] = ka[ja + 1];
    bx[n] = kb[jb];
    by[n] = kb[jb + 1];
  }
  const cosRotation = Math.cos(rotation);
  const sinRotation = Math.sin(rotation);
  // The first anchor with the most agreeing matches wins; only its list is built. The native kernels count the same
  // agreements in the same double arithmetic, several matches at a time.
  const variant = nativeVariant();
  const bestAnchor =
    variant !== null
      ? nativeKernels!.bestAnchor(variant, scales, logScales, ax, ay, bx, by, count, cosRotation, sinRotation,
          LOG_SCALE_TOLERANCE, GEOMETRY_POSITION_TOLERANCE_PX, GEOMETRY_POSITION_TOLERANCE_RELATIVE)
      : firstBestAnchor(count, cosRotation, sinRotation);
  const inliers: number[] = [];
  if (bestAnchor >= 0) agreeingWithAnchor(bestAnchor, count, cosRotation, sinRotation, inliers);
  return inliers;
}

/** Least-squares similarity (4 parameters) through the given matches. */
function fitSimilarity(a: NoseTemplate, b: NoseTemplate, matches: TentativeMatches, subset: number[]): Affine | null {
  const ka = a.keypoints;
  const kb = b.keypoints;
  let mxa = 0, mya = 0, mxb = 0, myb = 0;
  for (const n of subset) {
    mxa += ka[matches.a[n] * KEYPOINT_FIELDS];
    mya += ka[matches.a[n] * KEYPOINT_FIELDS + 1];
    mxb += kb[matches.b[n] * KEYPOINT_FIELDS];
    myb += kb[matches.b[n] * KEYPOINT_FIELDS + 1];
  }
  const count = subset.length;
  mxa /= count; mya /= count; mxb /= count; myb /= count;
  let sxx = 0, sab = 0, sba = 0;
  for (const n of subset) {
    const xa = ka[matches.a[n] * KEYPOINT_FIELDS] - mxa;
    const ya = ka[matches.a[n] * KEYPOINT_FIELDS + 1] - mya;
    const xb = kb[matches.b[n] * KEYPOINT_FIELDS] - mxb;
    const yb = kb[matches.b[n] * KEYPOINT_FIELDS + 1] - myb;
    sxx += xa * xa + ya * ya;
    sab += xa * xb + ya * yb;
    sba += xa * yb - ya * xb;
  }
  if (sxx === 0) return null;
  const c = sab / sxx;
  const s = sba / sxx;
  return { m00: c, m01: -s, m10: s, m11: c, tx: mxb - c * mxa + s * mya, ty: myb - s * mxa - c * mya };
}

/** Least-squares affine (6 parameters) through the given matches: absorbs tilt and foreshortening. */
function fitAffine(a: NoseTemplate, b: NoseTemplate, matches: TentativeMatches, subset: number[]): Affine | null {
  const ka = a.keypoints;
  const kb = b.keypoints;
  let sxx = 0, sxy = 0, syy = 0, sx = 0, sy = 0;
  let bx = 0, by = 0, bxx = 0, bxy = 0, byx = 0, byy = 0;
  for (const n of subset) {
    const x = ka[matches.a[n] * KEYPOINT_FIELDS];
    const y = ka[matches.a[n] * KEYPOINT_FIELDS + 1];
    const u = kb[matches.b[n] * KEYPOINT_FIELDS];
    const v = kb[matches.b[n] * KEYPOINT_FIELDS + 1];
    sxx += x * x; sxy += x * y; syy += y * y; sx += x; sy += y;
    bxx += x * u; byx += y * u; bx += u;
    bxy += x * v; byy += y * v; by += v;
  }
  const count = subset.length;
  // Normal equations M p = r with M = [[sxx, sxy, sx], [sxy, syy, sy], [sx, sy, n]], solved by Cramer's rule.
  const det = sxx * (syy * count - sy * sy) - sxy * (sxy * count - sy * sx) + sx * (sxy * sy - syy * sx);
  if (Math.abs(det) < 1e-6) return null;
  const solve = (r0: number, r1: number, r2: number): [number, number, number] => [
    (r0 * (syy * count - sy * sy) - sxy * (r1 * count - sy * r2) + sx * (r1 * sy - syy * r2)) / det,
    (sxx * (r1 * count - sy * r2) - r0 * (sxy * count - sy * sx) + sx * (sxy * r2 - r1 * sx)) / det,
    (sxx * (syy * r2 - r1 * sy) - sxy * (sxy * r2 - r1 * sx) + r0 * (sxy * sy - syy * sx)) / det,
  ];
  const [m00, m01, tx] = solve(bxx, byx, bx);
  const [m10, m11, ty] = solve(bxy, byy, by);
  return { m00, m01, m10, m11, tx, ty };
}

function transformScale(t: Affine): number {
  return Math.sqrt(Math.abs(t.m00 * t.m11 - t.m01 * t.m10));
}

/** Matches within the refit tolerance of the transform, each keypoint of b used at most once. */
function consistentMatches(a: NoseTemplate, b: NoseTemplate, matches: TentativeMatches, t: Affine): number[] {
  const ka = a.keypoints;
  const kb = b.keypoints;
  const bestForB = new Map<number, { n: number; error: number }>();
  for (let n = 0; n < matches.count; n++) {
    const ja = matches.a[n] * KEYPOINT_FIELDS;
    const jb = matches.b[n] * KEYPOINT_FIELDS;
    const px = t.m00 * ka[ja] + t.m01 * ka[ja + 1] + t.tx;
    const py = t.m10 * ka[ja] + t.m11 * ka[ja + 1] + t.ty;
    const ex = px - kb[jb];
    const ey = py - kb[jb + 1];
    const error = Math.sqrt(ex * ex + ey * ey);
    if (error > GEOMETRY_REFIT_TOLERANCE_PX) continue;
    const previous = bestForB.get(matches.b[n]);
    if (!previous || error < previous.error) bestForB.set(matches.b[n], { n, error });
  }
  return [...bestForB.values()].map((v) => v.n).sort((x, y) => x - y);
}

/** The inliers behind a comparison (for studies and support): keypoint indices in a and b, cosines, final transform. */
export interface InlierDetail {
  a: number[];
  b: number[];
  cosine: number[];
  /** The last fitted map from a to b, [m00, m01, m10, m11, tx, ty]; empty when none was fitted. */
  transform: number[];
}

/**
 * One rotation hypothesis (ROTATION_HYPOTHESES[h]): descriptor matching, then geometric verification. `detail`,
 * when given, receives the inliers.
 */
export function compareUnderHypothesis(
  a: NoseTemplate,
  b: NoseTemplate,
  h: number,
  neighbours = neighboursOfHypotheses(a, b),
  detail?: InlierDetail,
): PairComparison {
  const { rotationDeg } = ROTATION_HYPOTHESES[h];
  const burstA = keypointBurstWeights(a);
  const burstB = keypointBurstWeights(b);
  const matches = findTentativeMatches(keypointCount(a), neighbours[h], burstA, burstB);
  const none = { tentative: matches.count, inliers: 0, similarity: 0, scale: 0, rotationDeg };
  if (matches.count < 3) return none;
  let inliers = bestAnchorInliers(a, b, matches, (rotationDeg * Math.PI) / 180);
  if (inliers.length < 3) return none;
  let scale = 0;
  // Two refits: the anchor's estimate is coarse, the first refit's is close, the second settles.
  for (let iteration = 0; iteration < 2; iteration++) {
    const transform = inliers.length >= AFFINE_MIN_INLIERS ? fitAffine(a, b, matches, inliers) : fitSimilarity(a, b, matches, inliers);
    if (!transform) break;
    scale = transformScale(transform);
    if (detail) detail.transform = [transform.m00, transform.m01, transform.m10, transform.m11, transform.tx, transform.ty];
    if (scale < GEOMETRY_MIN_SCALE || scale > GEOMETRY_MAX_SCALE) return { ...none, scale };
    const refined = consistentMatches(a, b, matches, transform);
    if (refined.length < 3) break;
    inliers = refined;
  }
  if (detail) {
    detail.a = inliers.map((n) => matches.a[n]);
    detail.b = inliers.map((n) => matches.b[n]);
    detail.cosine = inliers.map((n) => matches.cosine[n]);
  }
  let weighted = 0;
  for (const n of inliers) {
    const burst = Math.min(burstA[matches.a[n]], burstB[matches.b[n]]);
    weighted += burst * inlierWeight(matches.cosine[n], inlierGenericness(a.genericness[matches.a[n]], b.genericness[matches.b[n]]));
  }
  return { tentative: matches.count, inliers: inliers.length, similarity: Math.round(weighted * 10) / 10, scale, rotationDeg };
}

/**
 * Compare two nose images under each rotation hypothesis (the first `hypotheses` of ROTATION_HYPOTHESES) and keep the
 * best: the most inliers, then the most tentative matches. Symmetric enough for scoring.
 */
export function compareTemplates(a: NoseTemplate, b: NoseTemplate, hypotheses = ROTATION_HYPOTHESES.length): PairComparison {
  return compareTemplatesInDetail(a, b, false, hypotheses).best;
}

/** compareTemplates, with every hypothesis' figures and, when asked, the winning hypothesis' inliers. */
export function compareTemplatesInDetail(
  a: NoseTemplate,
  b: NoseTemplate,
  withInliers = true,
  count = ROTATION_HYPOTHESES.length,
): { best: PairComparison; hypotheses: PairComparison[]; inliers: InlierDetail | null } {
  const neighbours = neighboursOfHypotheses(a, b, count);
  const hypotheses: PairComparison[] = [];
  const details: (InlierDetail | undefined)[] = [];
  let bestIndex = 0;
  for (let h = 0; h < count; h++) {
    const detail = withInliers ? { a: [], b: [], cosine: [], transform: [] } : undefined;
    const candidate = compareUnderHypothesis(a, b, h, neighbours, detail);
    hypotheses.push(candidate);
    details.push(detail);
    const best = hypotheses[bestIndex];
    if (candidate.inliers > best.inliers || (candidate.inliers === best.inliers && candidate.tentative > best.tentative)) bestIndex = h;
  }
  return { best: hypotheses[bestIndex], hypotheses, inliers: details[bestIndex] ?? null };
}
