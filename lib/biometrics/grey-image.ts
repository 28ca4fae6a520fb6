import { boxFilterCascade, centralGradients, convolveSeparable } from "./simd/image-kernel";

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
    return { width, height, data: convolveSeparable(data, width, height, gaussianKernel(sigma)) };
  }
  const radii = boxWidthsForGaussian(sigma, 3).map((boxWidth) => (boxWidth - 1) >> 1);
  return { width, height, data: boxFilterCascade(data, width, height, radii) };
}

/** Central-difference gradients (clamped at the border). */
export function gradients(image: GreyImage): { gx: Float32Array; gy: Float32Array } {
  return centralGradients(image.data, image.width, image.height);
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
