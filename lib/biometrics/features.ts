import { selfSimilarity } from "./burstiness";
import { describeImagePatchQuantised, descriptorNet, type DescriptorNet } from "./descriptor-net";
import { gaussianBlur, type GreyImage } from "./grey-image";
import { hessianDeterminant } from "./simd/image-kernel";
import { placeImage } from "./simd/net-kernel";
import {
  BORDER_SIGMAS,
  BURST_REFILL_ROUNDS,
  BURST_REFILL_DROP,
  DESCRIPTOR_DIMS,
  DESCRIPTOR_QUANT,
  DESCRIPTOR_ANGLES_DEG,
  DETECTION_MIN_RESPONSE,
  DETECTION_SIGMAS,
  GLARE_LEVEL,
  MAX_KEYPOINTS,
  MAX_LEVEL_SHARE,
  SPREAD_GRID,
} from "./parameters";

/** One level of the scale space: the blurred image and its blob response. */
export interface ScaleLevel {
  sigma: number;
  blurred: GreyImage;
  response: Float32Array;
}

export interface Keypoint {
  x: number;
  y: number;
  sigma: number;
  response: number;
  level: number;
}

export interface LocalFeatures {
  keypoints: Keypoint[];
  /**
   * sets x keypoints.length x DESCRIPTOR_DIMS, int8 quantised, unit L2 norm before quantisation: set s
   * describes every keypoint in the frame turned by DESCRIPTOR_ANGLES_DEG[s] (set 0 upright); the first
   * MATCHED_SETS frames, or all DESCRIPTOR_SETS (`describeKeypoints`).
   */
  descriptors: Int8Array;
  /** The scale space the keypoints were found and described in (`keypoint.level` indexes it). */
  levels: ScaleLevel[];
}

/** Scale-normalised determinant of the Hessian: positive at bright and dark blobs (beads, groove pits). */
function hessianResponse(image: GreyImage, sigma: number): Float32Array {
  return hessianDeterminant(image.data, image.width, image.height, sigma * sigma * sigma * sigma);
}

/**
 * The detection scale space (DETECTION_SIGMAS) of a contrast-normalised image: the levels keypoints are found and
 * described in. Without `responses`, the levels' blob responses are left empty (describing known keypoints again).
 */
export function buildScaleSpace(normalised: GreyImage, responses = true): ScaleLevel[] {
  const levels: ScaleLevel[] = [];
  let previous = normalised;
  let previousSigma = 0;
  for (const sigma of DETECTION_SIGMAS) {
    // Blurring the previous level by the difference keeps every kernel small.
    const blurred = gaussianBlur(previous, Math.sqrt(sigma * sigma - previousSigma * previousSigma));
    levels.push({ sigma, blurred, response: responses ? hessianResponse(blurred, sigma) : new Float32Array(0) });
    previous = blurred;
    previousSigma = sigma;
  }
  return levels;
}

/** Whether no pixel of `r` in the 3 x 3 block about `i` (the centre itself only if `withCentre`) reaches `value`. */
function exceedsBlock(r: Float32Array, i: number, width: number, value: number, withCentre: boolean): boolean {
  const above = i - width;
  const below = i + width;
  return !(
    r[above - 1] >= value || r[above] >= value || r[above + 1] >= value ||
    r[i - 1] >= value || (withCentre && r[i] >= value) || r[i + 1] >= value ||
    r[below - 1] >= value || r[below] >= value || r[below + 1] >= value
  );
}

/** A maximum over its 8 neighbours and the 3 x 3 blocks one scale above and below; its own level first, where most candidates fail. */
function isLocalMaximum(levels: ScaleLevel[], level: number, i: number, width: number): boolean {
  const value = levels[level].response[i];
  return (
    exceedsBlock(levels[level].response, i, width, value, false) &&
    (level === 0 || exceedsBlock(levels[level - 1].response, i, width, value, true)) &&
    (level === levels.length - 1 || exceedsBlock(levels[level + 1].response, i, width, value, true))
  );
}

function detectCandidates(levels: ScaleLevel[], smoothedGrey: GreyImage): Keypoint[] {
  const { width, height } = levels[0].blurred;
  const candidates: Keypoint[] = [];
  for (let level = 0; level < levels.length; level++) {
    const { sigma, response } = levels[level];
    const margin = Math.ceil(sigma * BORDER_SIGMAS);
    for (let y = Math.max(1, margin); y < height - Math.max(1, margin); y++) {
      for (let x = Math.max(1, margin); x < width - Math.max(1, margin); x++) {
        const i = y * width + x;
        if (response[i] < DETECTION_MIN_RESPONSE) continue;
        if (smoothedGrey.data[i] > GLARE_LEVEL) continue;
        if (!isLocalMaximum(levels, level, i, width)) continue;
        candidates.push({ x, y, sigma, response: response[i], level });
      }
    }
  }
  return candidates;
}

/**
 * Strongest first, at most a fair share per grid cell, so keypoints cover the whole nose, and at most
 * MAX_LEVEL_SHARE of MAX_KEYPOINTS per scale level, so the finest blobs of a sharp image leave room for the coarser
 * ones a soft capture of the same nose still shows. Candidates in `dropped` (a repeated pattern,
 * `extractLocalFeatures`) are passed over and take no share.
 */
function selectSpread(candidates: Keypoint[], width: number, height: number, dropped?: ReadonlySet<Keypoint>): Keypoint[] {
  candidates.sort((a, b) => b.response - a.response);
  const perCell = Math.ceil((MAX_KEYPOINTS * 2) / (SPREAD_GRID * SPREAD_GRID));
  const perLevel = Math.round(MAX_KEYPOINTS * MAX_LEVEL_SHARE);
  const counts = new Uint16Array(SPREAD_GRID * SPREAD_GRID);
  const levelCounts = new Uint16Array(DETECTION_SIGMAS.length);
  const selected: Keypoint[] = [];
  for (const keypoint of candidates) {
    if (dropped?.has(keypoint)) continue;
    if (levelCounts[keypoint.level] >= perLevel) continue;
    const cell =
      Math.min(SPREAD_GRID - 1, Math.floor((keypoint.y / height) * SPREAD_GRID)) * SPREAD_GRID +
      Math.min(SPREAD_GRID - 1, Math.floor((keypoint.x / width) * SPREAD_GRID));
    if (counts[cell] >= perCell) continue;
    counts[cell]++;
    levelCounts[keypoint.level]++;
    selected.push(keypoint);
    if (selected.length === MAX_KEYPOINTS) break;
  }
  return selected;
}

/**
 * The descriptors of frame `set` (DESCRIPTOR_ANGLES_DEG[set]; 0 is upright) in a `LocalFeatures.descriptors`
 * array of `keypointTotal` keypoints: the one place that knows the frames' layout.
 */
export function descriptorFrame(descriptors: Int8Array, keypointTotal: number, set: number): Int8Array {
  const size = keypointTotal * DESCRIPTOR_DIMS;
  return descriptors.subarray(set * size, (set + 1) * size);
}

/** The keypoints of a contrast-normalised image and the scale space they were found in (`keypoint.level` indexes it). */
export function detectKeypoints(normalised: GreyImage, grey: GreyImage): { keypoints: Keypoint[]; levels: ScaleLevel[] } {
  const { candidates, levels } = detectAllCandidates(normalised, grey);
  return { keypoints: selectSpread(candidates, normalised.width, normalised.height), levels };
}

function detectAllCandidates(normalised: GreyImage, grey: GreyImage): { candidates: Keypoint[]; levels: ScaleLevel[] } {
  const levels = buildScaleSpace(normalised);
  return { candidates: detectCandidates(levels, gaussianBlur(grey, 1.5)), levels };
}

/**
 * The descriptors of keypoints found in `levels`, in the `LocalFeatures.descriptors` layout: each keypoint's patch of
 * its scale level (patches.ts) in the first `sets` frames, through `net` (the engine's unless another is measured),
 * int8-quantised. Each frame costs one network evaluation per keypoint, most of an extraction's time.
 */
export function describeKeypoints(
  levels: ScaleLevel[],
  keypoints: Keypoint[],
  sets: number,
  net: DescriptorNet = descriptorNet(),
  known?: { upright: Int8Array },
): Int8Array {
  return describeInFrames(levels, keypoints, DESCRIPTOR_ANGLES_DEG.slice(0, sets), net, known);
}

/**
 * describeKeypoints in frames turned by any `anglesDeg` (the first one's descriptors may be `known`), in the
 * `LocalFeatures.descriptors` layout: a quarter-turned view of a template (turns.ts) describes its keypoints in frames
 * turned by 90°, 180° or 270° more than the template's own.
 */
export function describeInFrames(
  levels: ScaleLevel[],
  keypoints: readonly { x: number; y: number; sigma: number; level: number }[],
  anglesDeg: readonly number[],
  net: DescriptorNet = descriptorNet(),
  known?: { upright: Int8Array },
): Int8Array {
  const descriptors = new Int8Array(anglesDeg.length * keypoints.length * DESCRIPTOR_DIMS);
  // Each level in the network kernel's memory once, where its patches are sampled (slot = level).
  const images = levels.map(({ blurred }, level) => placeImage(level, blurred.data, blurred.width, blurred.height));
  // Upright descriptors already computed (the burst refill's) are copied, not described again.
  if (known) descriptors.set(known.upright, 0);
  for (let s = known ? 1 : 0; s < anglesDeg.length; s++) {
    const angle = (anglesDeg[s] * Math.PI) / 180;
    const frame = descriptorFrame(descriptors, keypoints.length, s);
    for (let k = 0; k < keypoints.length; k++) {
      describeImagePatchQuantised(net, images[keypoints[k].level], keypoints[k], angle, DESCRIPTOR_QUANT, frame, k * DESCRIPTOR_DIMS);
    }
  }
  return descriptors;
}

/**
 * Keypoints and descriptors, in the first `sets` frames, of a contrast-normalised image; with `refillRounds` > 0
 * (BURST_REFILL_ROUNDS), without the keypoints of a repeated pattern (`withoutRepeatedPattern`).
 */
export function extractLocalFeatures(
  normalised: GreyImage,
  grey: GreyImage,
  sets: number,
  refillRounds: number = BURST_REFILL_ROUNDS,
): LocalFeatures {
  if (refillRounds === 0) {
    const { keypoints, levels } = detectKeypoints(normalised, grey);
    return { keypoints, descriptors: describeKeypoints(levels, keypoints, sets), levels };
  }
  const { candidates, levels } = detectAllCandidates(normalised, grey);
  const { keypoints, upright } = withoutRepeatedPattern(candidates, levels, normalised.width, normalised.height, refillRounds);
  return { keypoints, descriptors: describeKeypoints(levels, keypoints, sets, descriptorNet(), { upright }), levels };
}

/**
 * The spread selection with the keypoints of a repeated pattern left out (BURST_REFILL_ROUNDS): each round
 * describes the newly selected keypoints upright, measures every described keypoint's self-similarity among all
 * described so far (a dropped one still reveals its repeats), drops those above BURST_REFILL_DROP (≤ BURSTINESS_FULL,
 * not BURSTINESS_NONE: the matcher sees only the kept keypoints, and a kept keypoint whose repeats were dropped would
 * look unique to it) and selects again.
 * Returns the kept keypoints, strongest first, with their upright descriptors.
 */
function withoutRepeatedPattern(
  candidates: Keypoint[],
  levels: ScaleLevel[],
  width: number,
  height: number,
  rounds: number,
): { keypoints: Keypoint[]; upright: Int8Array } {
  const dropped = new Set<Keypoint>();
  const described = new Map<Keypoint, Int8Array>();
  let selected = selectSpread(candidates, width, height);
  for (let round = 0; ; round++) {
    const fresh = selected.filter((k) => !described.has(k));
    const freshDescriptors = describeKeypoints(levels, fresh, 1);
    fresh.forEach((k, i) => described.set(k, freshDescriptors.subarray(i * DESCRIPTOR_DIMS, (i + 1) * DESCRIPTOR_DIMS)));
    const all = [...described.keys()];
    const upright = new Int8Array(all.length * DESCRIPTOR_DIMS);
    const packed = new Float32Array(all.length * 3);
    all.forEach((k, i) => {
      upright.set(described.get(k)!, i * DESCRIPTOR_DIMS);
      packed.set([k.x, k.y, k.sigma], i * 3);
    });
    const similarity = selfSimilarity(upright, packed, 3);
    let newlyDropped = 0;
    all.forEach((k, i) => {
      if (similarity[i] > BURST_REFILL_DROP && !dropped.has(k)) {
        dropped.add(k);
        newlyDropped++;
      }
    });
    if (round >= rounds || newlyDropped === 0) {
      const kept = selected.filter((k) => !dropped.has(k));
      const keptUpright = new Int8Array(kept.length * DESCRIPTOR_DIMS);
      kept.forEach((k, i) => keptUpright.set(described.get(k)!, i * DESCRIPTOR_DIMS));
      return { keypoints: kept, upright: keptUpright };
    }
    selected = selectSpread(candidates, width, height, dropped);
  }
}
