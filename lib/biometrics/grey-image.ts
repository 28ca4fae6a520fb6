import { boxFilterCascade } from "./simd/blur-kernel";

/** Below this sigma a three-box cascade is a poor Gaussian; the exact kernel is cheap there anyway. */
const BOX_APPROXIMATION_MIN_SIGMA = 1.5;

/** A single-channel image in row-major order. Values are 0–255 for decoded images, arbitrary after filtering. */
export interface GreyImage {
  readonly width: number;
  readonly height: number;
  readonly data: Float32Array;
}

export function createGreyImage(width: number, height: number, data?: Float32Array): GreyImage {
  return { width, height, data: data ?? new Float32Array(width * height) };
}

function gaussianKernel(sigma: number): Float32Array {
  const radius = Math.max(1, Math.ceil(sigma * 3));
  const kernel = new Float32Array(radius * 2 + 1);
  let sum = 0;
  for (let i = -radius; i <= radius; i++) {
    const value = Math.exp(-(i * i) / (2 * sigma * sigma));
    kernel[i + radius] = value;
    sum += value;
  }
  for (let i = 0; i < kernel.length; i++) kernel[i] /= sum;
  return kernel;
}

/** Convolve `length` values read with `stride` from `src` into `dst`, edges clamped via a padded copy. */
function convolveLine(
  src: Float32Array, srcStart: number, stride: number, length: number,
  kernel: Float32Array, padded: Float32Array, dst: Float32Array,
): void {
  const radius = (kernel.length - 1) >> 1;
  const first = src[srcStart];
  const last = src[srcStart + (length - 1) * stride];
  for (let i = 0; i < radius; i++) {
    padded[i] = first;
    padded[radius + length + i] = last;
  }
  for (let i = 0; i < length; i++) padded[radius + i] = src[srcStart + i * stride];
  const taps = kernel.length;
  for (let i = 0; i < length; i++) {
    let acc = 0;
    for (let k = 0; k < taps; k++) acc += padded[i + k] * kernel[k];
    dst[srcStart + i * stride] = acc;
  }
}

/** Widths of `passes` box filters whose cascade approximates a Gaussian of `sigma` (Kovesi 2010). */
function boxWidthsForGaussian(sigma: number, passes: number): number[] {
  const ideal = Math.sqrt((12 * sigma * sigma) / passes + 1);
  let lower = Math.floor(ideal);
  if (lower % 2 === 0) lower--;
  const upper = lower + 2;
  const lowerCount = Math.round((12 * sigma * sigma - passes * lower * lower - 4 * passes * lower - 3 * passes) / (-4 * lower - 4));
  return Array.from({ length: passes }, (_, i) => (i < lowerCount ? lower : upper));
}

/** Separable Gaussian blur with clamped edges: exact kernel for small sigmas, three box passes for larger. */
export function gaussianBlur(image: GreyImage, sigma: number): GreyImage {
  const { width, height, data } = image;
  if (sigma < BOX_APPROXIMATION_MIN_SIGMA) {
    const out = new Float32Array(width * height);
    const kernel = gaussianKernel(sigma);
    const padded = new Float32Array(Math.max(width, height) + kernel.length);
    const temp = new Float32Array(width * height);
    for (let y = 0; y < height; y++) convolveLine(data, y * width, 1, width, kernel, padded, temp);
    for (let x = 0; x < width; x++) convolveLine(temp, x, width, height, kernel, padded, out);
    return { width, height, data: out };
  }
  const radii = boxWidthsForGaussian(sigma, 3).map((boxWidth) => (boxWidth - 1) >> 1);
  return { width, height, data: boxFilterCascade(data, width, height, radii) };
}

/** Central-difference gradients (clamped at the border). */
export function gradients(image: GreyImage): { gx: Float32Array; gy: Float32Array } {
  const { width, height, data } = image;
  const gx = new Float32Array(width * height);
  const gy = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const up = (y > 0 ? y - 1 : y) * width;
    const down = (y < height - 1 ? y + 1 : y) * width;
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const left = x > 0 ? x - 1 : x;
      const right = x < width - 1 ? x + 1 : x;
      gx[row + x] = (data[row + right] - data[row + left]) * 0.5;
      gy[row + x] = (data[down + x] - data[up + x]) * 0.5;
    }
  }
  return { gx, gy };
}

/** Bilinear sample with clamped coordinates. */
export function sampleBilinear(values: Float32Array, width: number, height: number, x: number, y: number): number {
  const cx = x < 0 ? 0 : x > width - 1.001 ? width - 1.001 : x;
  const cy = y < 0 ? 0 : y > height - 1.001 ? height - 1.001 : y;
  const x0 = cx | 0;
  const y0 = cy | 0;
  const fx = cx - x0;
  const fy = cy - y0;
  const i = y0 * width + x0;
  const top = values[i] + (values[i + 1] - values[i]) * fx;
  const bottom = values[i + width] + (values[i + width + 1] - values[i + width]) * fx;
  return top + (bottom - top) * fy;
}

export function meanAndStd(values: Float32Array): { mean: number; std: number } {
  let sum = 0;
  let sumSq = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i];
    sumSq += values[i] * values[i];
  }
  const mean = sum / values.length;
  return { mean, std: Math.sqrt(Math.max(0, sumSq / values.length - mean * mean)) };
}
