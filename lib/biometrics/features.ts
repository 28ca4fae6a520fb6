import { gaussianBlur, gradients, sampleBilinear, type GreyImage } from "./grey-image";
import {
  BORDER_SIGMAS,
  DESCRIPTOR_CELL_SIGMAS,
  DESCRIPTOR_CLIP,
  DESCRIPTOR_DIMS,
  DESCRIPTOR_GRID,
  DESCRIPTOR_ORIENTATION_BINS,
  DESCRIPTOR_QUANT,
  DESCRIPTOR_SAMPLES_PER_CELL,
  DETECTION_MIN_RESPONSE,
  DETECTION_SIGMAS,
  GLARE_LEVEL,
  MAX_KEYPOINTS,
  SPREAD_GRID,
} from "./parameters";

/** One level of the scale space: the blurred image and its gradients. */
interface ScaleLevel {
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
  angle: number;
  response: number;
  level: number;
}

export interface LocalFeatures {
  keypoints: Keypoint[];
  /** keypoints.length x DESCRIPTOR_DIMS, row-major, int8 quantised, unit L2 norm before quantisation. */
  descriptors: Int8Array;
}

/** Scale-normalised determinant of the Hessian: positive at bright and dark blobs (beads, groove pits). */
function hessianResponse(image: GreyImage, sigma: number): Float32Array {
  const { width, height, data } = image;
  const out = new Float32Array(width * height);
  const norm = sigma * sigma * sigma * sigma;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const c = data[i];
      const dxx = data[i + 1] - 2 * c + data[i - 1];
      const dyy = data[i + width] - 2 * c + data[i - width];
      const dxy = (data[i + width + 1] - data[i + width - 1] - data[i - width + 1] + data[i - width - 1]) * 0.25;
      out[i] = (dxx * dyy - dxy * dxy) * norm;
    }
  }
  return out;
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

function isLocalMaximum(levels: ScaleLevel[], level: number, i: number, width: number): boolean {
  const value = levels[level].response[i];
  for (let l = Math.max(0, level - 1); l <= Math.min(levels.length - 1, level + 1); l++) {
    const r = levels[l].response;
    for (let dy = -width; dy <= width; dy += width) {
      for (let dx = -1; dx <= 1; dx++) {
        if ((l !== level || dy !== 0 || dx !== 0) && r[i + dy + dx] >= value) return false;
      }
    }
  }
  return true;
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
        candidates.push({ x, y, sigma, angle: 0, response: response[i], level });
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

const ORIENTATION_BINS = 36;
/** Orientation window: 11 x 11 samples spaced 0.75 sigma, Gaussian-weighted with sigma 1.5 (in keypoint sigmas). */
const ORIENTATION_SAMPLES: { u: number; v: number; weight: number }[] = [];
for (let j = -5; j <= 5; j++) {
  for (let i = -5; i <= 5; i++) {
    const u = i * 0.75;
    const v = j * 0.75;
    ORIENTATION_SAMPLES.push({ u, v, weight: Math.exp(-(u * u + v * v) / (2 * 1.5 * 1.5)) });
  }
}

/** Dominant gradient direction around the keypoint (SIFT's orientation histogram on a sampled grid). */
function dominantAngle(level: ScaleLevel, keypoint: Keypoint): number {
  const { width, height } = level.blurred;
  const histogram = new Float32Array(ORIENTATION_BINS);
  for (const s of ORIENTATION_SAMPLES) {
    const x = keypoint.x + s.u * keypoint.sigma;
    const y = keypoint.y + s.v * keypoint.sigma;
    const gx = sampleBilinear(level.gx, width, height, x, y);
    const gy = sampleBilinear(level.gy, width, height, x, y);
    const bin = (((Math.atan2(gy, gx) + Math.PI) / (2 * Math.PI)) * ORIENTATION_BINS) % ORIENTATION_BINS;
    histogram[Math.floor(bin)] += s.weight * Math.sqrt(gx * gx + gy * gy);
  }
  let best = 0;
  for (let b = 1; b < ORIENTATION_BINS; b++) if (histogram[b] > histogram[best]) best = b;
  // Parabolic interpolation between the peak and its neighbours gives sub-bin precision.
  const left = histogram[(best + ORIENTATION_BINS - 1) % ORIENTATION_BINS];
  const right = histogram[(best + 1) % ORIENTATION_BINS];
  const denominator = left - 2 * histogram[best] + right;
  const offset = denominator !== 0 ? (0.5 * (left - right)) / denominator : 0;
  return ((best + 0.5 + offset) / ORIENTATION_BINS) * 2 * Math.PI - Math.PI;
}

interface DescriptorSample {
  u: number;
  v: number;
  weight: number;
  /** Cell indices (row, col) of the first of the 2 x 2 cells the sample spreads into, and its weights. */
  row: number;
  col: number;
  fu: number;
  fv: number;
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
      samples.push({ u, v, weight: Math.exp(-(u * u + v * v) / (2 * half * half)), row, col, fu: cu - col, fv: cv - row });
    }
  }
  return samples;
})();

function addToCell(histogram: Float32Array, row: number, col: number, o0: number, fo: number, w: number): void {
  if (row < 0 || row >= DESCRIPTOR_GRID || col < 0 || col >= DESCRIPTOR_GRID || w === 0) return;
  const bins = DESCRIPTOR_ORIENTATION_BINS;
  const base = (row * DESCRIPTOR_GRID + col) * bins;
  histogram[base + (o0 % bins)] += w * (1 - fo);
  histogram[base + ((o0 + 1) % bins)] += w * fo;
}

/** SIFT-like gradient histogram in the keypoint's rotated frame, RootSIFT-normalised and int8-quantised. */
function describe(level: ScaleLevel, keypoint: Keypoint, out: Int8Array, offset: number): void {
  const { width, height } = level.blurred;
  const bins = DESCRIPTOR_ORIENTATION_BINS;
  const cell = DESCRIPTOR_CELL_SIGMAS * keypoint.sigma;
  const cos = Math.cos(keypoint.angle);
  const sin = Math.sin(keypoint.angle);
  const histogram = new Float32Array(DESCRIPTOR_DIMS);
  for (const s of DESCRIPTOR_SAMPLES) {
    const x = keypoint.x + cell * (s.u * cos - s.v * sin);
    const y = keypoint.y + cell * (s.u * sin + s.v * cos);
    const gx = sampleBilinear(level.gx, width, height, x, y);
    const gy = sampleBilinear(level.gy, width, height, x, y);
    const gu = gx * cos + gy * sin;
    const gv = -gx * sin + gy * cos;
    const magnitude = Math.sqrt(gu * gu + gv * gv) * s.weight;
    const orientation = ((Math.atan2(gv, gu) + Math.PI) / (2 * Math.PI)) * bins;
    const o0 = Math.floor(orientation);
    const fo = orientation - o0;
    addToCell(histogram, s.row, s.col, o0, fo, magnitude * (1 - s.fv) * (1 - s.fu));
    addToCell(histogram, s.row, s.col + 1, o0, fo, magnitude * (1 - s.fv) * s.fu);
    addToCell(histogram, s.row + 1, s.col, o0, fo, magnitude * s.fv * (1 - s.fu));
    addToCell(histogram, s.row + 1, s.col + 1, o0, fo, magnitude * s.fv * s.fu);
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

/** Keypoints and descriptors of a contrast-normalised image. */
export function extractLocalFeatures(normalised: GreyImage, grey: GreyImage): LocalFeatures {
  const levels = buildScaleSpace(normalised);
  const smoothedGrey = gaussianBlur(grey, 1.5);
  const keypoints = selectSpread(detectCandidates(levels, smoothedGrey), normalised.width, normalised.height);
  const descriptors = new Int8Array(keypoints.length * DESCRIPTOR_DIMS);
  keypoints.forEach((keypoint, k) => {
    const level = levels[keypoint.level];
    keypoint.angle = dominantAngle(level, keypoint);
    describe(level, keypoint, descriptors, k * DESCRIPTOR_DIMS);
  });
  return { keypoints, descriptors };
}

/** Mean fine-scale gradient magnitude of the normalised image: the sharpness figure used by quality. */
export function fineDetailEnergy(normalised: GreyImage): number {
  const { gx, gy } = gradients(normalised);
  let sum = 0;
  for (let i = 0; i < gx.length; i++) sum += Math.sqrt(gx[i] * gx[i] + gy[i] * gy[i]);
  return sum / gx.length;
}
