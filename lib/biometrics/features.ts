import { gaussianBlur, gradients, type GreyImage } from "./grey-image";
import { hessianDeterminant } from "./simd/image-kernel";
import {
  BORDER_SIGMAS,
  DESCRIPTOR_CELL_SIGMAS,
  DESCRIPTOR_CLIP,
  DESCRIPTOR_DIMS,
  DESCRIPTOR_GRID,
  DESCRIPTOR_ORIENTATION_BINS,
  DESCRIPTOR_QUANT,
  DESCRIPTOR_SAMPLES_PER_CELL,
  DESCRIPTOR_SETS,
  DESCRIPTOR_ANGLES_DEG,
  DETECTION_MIN_RESPONSE,
  DETECTION_SIGMAS,
  GLARE_LEVEL,
  MAX_KEYPOINTS,
  SPREAD_GRID,
} from "./parameters";

/** One level of the scale space: the blurred image and its gradients. */
export interface ScaleLevel {
  sigma: number;
  blurred: GreyImage;
  gx: Float32Array;
  gy: Float32Array;
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
   * DESCRIPTOR_SETS x keypoints.length x DESCRIPTOR_DIMS, int8 quantised, unit L2 norm before quantisation:
   * set s describes every keypoint in the frame turned by DESCRIPTOR_ANGLES_DEG[s] (set 0 upright).
   */
  descriptors: Int8Array;
}

/** Scale-normalised determinant of the Hessian: positive at bright and dark blobs (beads, groove pits). */
function hessianResponse(image: GreyImage, sigma: number): Float32Array {
  return hessianDeterminant(image.data, image.width, image.height, sigma * sigma * sigma * sigma);
}

function buildScaleSpace(normalised: GreyImage): ScaleLevel[] {
  const levels: ScaleLevel[] = [];
  let previous = normalised;
  let previousSigma = 0;
  for (const sigma of DETECTION_SIGMAS) {
    // Blurring the previous level by the difference keeps every kernel small.
    const blurred = gaussianBlur(previous, Math.sqrt(sigma * sigma - previousSigma * previousSigma));
    const { gx, gy } = gradients(blurred);
    levels.push({ sigma, blurred, gx, gy, response: hessianResponse(blurred, sigma) });
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

/** Strongest first, at most a fair share per grid cell, so keypoints cover the whole nose. */
function selectSpread(candidates: Keypoint[], width: number, height: number): Keypoint[] {
  candidates.sort((a, b) => b.response - a.response);
  const perCell = Math.ceil((MAX_KEYPOINTS * 2) / (SPREAD_GRID * SPREAD_GRID));
  const counts = new Uint16Array(SPREAD_GRID * SPREAD_GRID);
  const selected: Keypoint[] = [];
  for (const keypoint of candidates) {
    const cell =
      Math.min(SPREAD_GRID - 1, Math.floor((keypoint.y / height) * SPREAD_GRID)) * SPREAD_GRID +
      Math.min(SPREAD_GRID - 1, Math.floor((keypoint.x / width) * SPREAD_GRID));
    if (counts[cell] >= perCell) continue;
    counts[cell]++;
    selected.push(keypoint);
    if (selected.length === MAX_KEYPOINTS) break;
  }
  return selected;
}

/**
 * Both gradient components bilinearly sampled at (x, y) into `out`, coordinates clamped to the image;
 * the position and weights are worked out once for the two.
 */
function sampleGradient(level: ScaleLevel, width: number, height: number, x: number, y: number, out: { gx: number; gy: number }): void {
  const cx = x < 0 ? 0 : x > width - 1.001 ? width - 1.001 : x;
  const cy = y < 0 ? 0 : y > height - 1.001 ? height - 1.001 : y;
  const x0 = cx | 0;
  const y0 = cy | 0;
  const fx = cx - x0;
  const fy = cy - y0;
  const i = y0 * width + x0;
  const j = i + width;
  const { gx, gy } = level;
  const gxTop = gx[i] + (gx[i + 1] - gx[i]) * fx;
  const gxBottom = gx[j] + (gx[j + 1] - gx[j]) * fx;
  out.gx = gxTop + (gxBottom - gxTop) * fy;
  const gyTop = gy[i] + (gy[i + 1] - gy[i]) * fx;
  const gyBottom = gy[j] + (gy[j + 1] - gy[j]) * fx;
  out.gy = gyTop + (gyBottom - gyTop) * fy;
}

interface DescriptorSample {
  u: number;
  v: number;
  weight: number;
  /** The sample's weights between the columns and between the rows of the 2 x 2 cells it spreads into. */
  fu: number;
  fv: number;
  /** Histogram offsets of those cells (top left, top right, bottom left, bottom right); -1 outside the grid. */
  topLeft: number;
  topRight: number;
  bottomLeft: number;
  bottomRight: number;
}

/** Offset of a descriptor cell's bins in the histogram, or -1 for a cell outside the grid. */
function cellOffset(row: number, col: number): number {
  if (row < 0 || row >= DESCRIPTOR_GRID || col < 0 || col >= DESCRIPTOR_GRID) return -1;
  return (row * DESCRIPTOR_GRID + col) * DESCRIPTOR_ORIENTATION_BINS;
}

/** The sampling grid in the keypoint's frame is the same for every keypoint, so its geometry is computed once. */
const DESCRIPTOR_SAMPLES: DescriptorSample[] = (() => {
  const half = DESCRIPTOR_GRID / 2;
  const perSide = DESCRIPTOR_GRID * DESCRIPTOR_SAMPLES_PER_CELL;
  const samples: DescriptorSample[] = [];
  for (let j = 0; j < perSide; j++) {
    for (let i = 0; i < perSide; i++) {
      const u = (i + 0.5) / DESCRIPTOR_SAMPLES_PER_CELL - half;
      const v = (j + 0.5) / DESCRIPTOR_SAMPLES_PER_CELL - half;
      const cu = u + half - 0.5;
      const cv = v + half - 0.5;
      const col = Math.floor(cu);
      const row = Math.floor(cv);
      samples.push({
        u,
        v,
        weight: Math.exp(-(u * u + v * v) / (2 * half * half)),
        fu: cu - col,
        fv: cv - row,
        topLeft: cellOffset(row, col),
        topRight: cellOffset(row, col + 1),
        bottomLeft: cellOffset(row + 1, col),
        bottomRight: cellOffset(row + 1, col + 1),
      });
    }
  }
  return samples;
})();

/** Weight `w` into the bins `low` and `high` of the cell at `base` by the fraction `fo` (nothing outside the grid). */
function spreadIntoCell(histogram: Float32Array, base: number, low: number, high: number, fo: number, w: number): void {
  if (base < 0 || w === 0) return;
  histogram[base + low] += w * (1 - fo);
  histogram[base + high] += w * fo;
}

/**
 * atan2 by a polynomial on [0, 1] and octant symmetry: error below 3e-4 rad (0.02 °), far below an orientation
 * bin (45 °), and several times faster than Math.atan2, which descriptors call ~230,000 times an image.
 */
export function fastAtan2(y: number, x: number): number {
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  const high = ax > ay ? ax : ay;
  if (high === 0) return 0;
  const a = (ax > ay ? ay : ax) / high;
  const s = a * a;
  let r = ((-0.0464964749 * s + 0.15931422) * s - 0.327622764) * s * a + a;
  if (ay > ax) r = Math.PI / 2 - r;
  if (x < 0) r = Math.PI - r;
  return y < 0 ? -r : r;
}

/** One descriptor's histogram, reused from keypoint to keypoint (it is cleared before each). */
const descriptorHistogram = new Float32Array(DESCRIPTOR_DIMS);

/** SIFT-like gradient histogram in the frame turned by `angle` (radians), RootSIFT-normalised and int8-quantised. */
function describe(level: ScaleLevel, keypoint: Keypoint, angle: number, out: Int8Array, offset: number): void {
  const { width, height } = level.blurred;
  const bins = DESCRIPTOR_ORIENTATION_BINS;
  const cell = DESCRIPTOR_CELL_SIGMAS * keypoint.sigma;
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const histogram = descriptorHistogram.fill(0);
  const gradient = { gx: 0, gy: 0 };
  for (const s of DESCRIPTOR_SAMPLES) {
    const x = keypoint.x + cell * (s.u * cos - s.v * sin);
    const y = keypoint.y + cell * (s.u * sin + s.v * cos);
    sampleGradient(level, width, height, x, y, gradient);
    const { gx, gy } = gradient;
    const gu = gx * cos + gy * sin;
    const gv = -gx * sin + gy * cos;
    const magnitude = Math.sqrt(gu * gu + gv * gv) * s.weight;
    const orientation = ((fastAtan2(gv, gu) + Math.PI) / (2 * Math.PI)) * bins;
    const o0 = Math.floor(orientation);
    const fo = orientation - o0;
    // The sample's magnitude spreads over the 2 x 2 cells about it and, in each, the two nearest bins.
    const low = o0 % bins;
    const high = (o0 + 1) % bins;
    const upper = magnitude * (1 - s.fv);
    const lower = magnitude * s.fv;
    spreadIntoCell(histogram, s.topLeft, low, high, fo, upper * (1 - s.fu));
    spreadIntoCell(histogram, s.topRight, low, high, fo, upper * s.fu);
    spreadIntoCell(histogram, s.bottomLeft, low, high, fo, lower * (1 - s.fu));
    spreadIntoCell(histogram, s.bottomRight, low, high, fo, lower * s.fu);
  }
  normaliseDescriptor(histogram);
  for (let d = 0; d < DESCRIPTOR_DIMS; d++) out[offset + d] = Math.round(histogram[d] * DESCRIPTOR_QUANT);
}

/** SIFT clipping (limits glare edges), then RootSIFT (Hellinger kernel), leaving a unit L2 vector. */
function normaliseDescriptor(histogram: Float32Array): void {
  let norm = 0;
  for (let d = 0; d < histogram.length; d++) norm += histogram[d] * histogram[d];
  norm = Math.sqrt(norm) || 1;
  let l1 = 0;
  for (let d = 0; d < histogram.length; d++) {
    histogram[d] = Math.min(histogram[d] / norm, DESCRIPTOR_CLIP);
    l1 += histogram[d];
  }
  l1 = l1 || 1;
  for (let d = 0; d < histogram.length; d++) histogram[d] = Math.sqrt(histogram[d] / l1);
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
  const levels = buildScaleSpace(normalised);
  const smoothedGrey = gaussianBlur(grey, 1.5);
  return { keypoints: selectSpread(detectCandidates(levels, smoothedGrey), normalised.width, normalised.height), levels };
}

/** Keypoints and descriptors of a contrast-normalised image. */
export function extractLocalFeatures(normalised: GreyImage, grey: GreyImage): LocalFeatures {
  const { keypoints, levels } = detectKeypoints(normalised, grey);
  const descriptors = new Int8Array(DESCRIPTOR_SETS * keypoints.length * DESCRIPTOR_DIMS);
  for (let s = 0; s < DESCRIPTOR_SETS; s++) {
    const angle = (DESCRIPTOR_ANGLES_DEG[s] * Math.PI) / 180;
    const frame = descriptorFrame(descriptors, keypoints.length, s);
    keypoints.forEach((keypoint, k) => describe(levels[keypoint.level], keypoint, angle, frame, k * DESCRIPTOR_DIMS));
  }
  return { keypoints, descriptors };
}
