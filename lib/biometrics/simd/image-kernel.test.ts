import { describe, expect, it } from "vitest";
import { boxFilterCascade, centralGradients, convolveSeparable, hessianDeterminant, normaliseLocalContrast } from "./image-kernel";

/**
 * The JavaScript loops the kernel replaced (commit c348a1c), kept here as the reference: every pass
 * must match them bit for bit, at odd sizes and down to one-pixel images, where the kernel's pairs of
 * lanes and clamped edges are most likely to go wrong.
 */
const reference = {
  boxLine(src: Float32Array, dst: Float32Array, start: number, stride: number, length: number, radius: number): void {
    const padded = new Float32Array(length + 2 * radius + 2);
    for (let i = 0; i <= radius; i++) {
      padded[i] = src[start];
      padded[radius + 1 + length + i] = src[start + (length - 1) * stride];
    }
    for (let i = 0; i < length; i++) padded[radius + 1 + i] = src[start + i * stride];
    const scale = 1 / (2 * radius + 1);
    let acc = 0;
    for (let i = 1; i <= 2 * radius + 1; i++) acc += padded[i];
    for (let i = 0; i < length; i++) {
      dst[start + i * stride] = acc * scale;
      acc += padded[i + 2 * radius + 2] - padded[i + 1];
    }
  },
  boxColumns(src: Float32Array, dst: Float32Array, width: number, height: number, radius: number): void {
    const scale = 1 / (2 * radius + 1);
    const row = (y: number) => (y < 0 ? 0 : y >= height ? height - 1 : y) * width;
    const sums = new Float64Array(width);
    for (let k = -radius; k <= radius; k++) {
      const r = row(k);
      for (let x = 0; x < width; x++) sums[x] += src[r + x];
    }
    for (let y = 0; y < height; y++) {
      const out = y * width;
      for (let x = 0; x < width; x++) dst[out + x] = sums[x] * scale;
      const add = row(y + radius + 1);
      const remove = row(y - radius);
      for (let x = 0; x < width; x++) sums[x] += src[add + x] - src[remove + x];
    }
  },
  boxCascade(data: Float32Array, width: number, height: number, radii: number[]): Float32Array {
    const a = Float32Array.from(data);
    const out = new Float32Array(data.length);
    for (const radius of radii) {
      for (let y = 0; y < height; y++) reference.boxLine(a, out, y * width, 1, width, radius);
      reference.boxColumns(out, a, width, height, radius);
    }
    return a;
  },
  convolveLine(src: Float32Array, start: number, stride: number, length: number, kernel: Float32Array, dst: Float32Array): void {
    const radius = (kernel.length - 1) >> 1;
    const padded = new Float32Array(length + kernel.length);
    for (let i = 0; i < radius; i++) {
      padded[i] = src[start];
      padded[radius + length + i] = src[start + (length - 1) * stride];
    }
    for (let i = 0; i < length; i++) padded[radius + i] = src[start + i * stride];
    for (let i = 0; i < length; i++) {
      let acc = 0;
      for (let k = 0; k < kernel.length; k++) acc += padded[i + k] * kernel[k];
      dst[start + i * stride] = acc;
    }
  },
  convolve(data: Float32Array, width: number, height: number, kernel: Float32Array): Float32Array {
    const temp = new Float32Array(data.length);
    const out = new Float32Array(data.length);
    for (let y = 0; y < height; y++) reference.convolveLine(data, y * width, 1, width, kernel, temp);
    for (let x = 0; x < width; x++) reference.convolveLine(temp, x, width, height, kernel, out);
    return out;
  },
  gradients(data: Float32Array, width: number, height: number): { gx: Float32Array; gy: Float32Array } {
    const gx = new Float32Array(data.length);
    const gy = new Float32Array(data.length);
    for (let y = 0; y < height; y++) {
      const up = (y > 0 ? y - 1 : y) * width;
      const down = (y < height - 1 ? y + 1 : y) * width;
      const row = y * width;
      for (let x = 0; x < width; x++) {
        gx[row + x] = (data[row + (x < width - 1 ? x + 1 : x)] - data[row + (x > 0 ? x - 1 : x)]) * 0.5;
        gy[row + x] = (data[down + x] - data[up + x]) * 0.5;
      }
    }
    return { gx, gy };
  },
  hessian(data: Float32Array, width: number, height: number, norm: number): Float32Array {
    const out = new Float32Array(data.length);
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
  },
  integral(values: Float32Array, width: number, height: number, square: boolean): Float64Array {
    const stride = width + 1;
    const table = new Float64Array(stride * (height + 1));
    for (let y = 0; y < height; y++) {
      let rowSum = 0;
      for (let x = 0; x < width; x++) {
        const v = values[y * width + x];
        rowSum += square ? v * v : v;
        table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + rowSum;
      }
    }
    return table;
  },
  normalise(data: Float32Array, width: number, height: number, radius: number, minVariance: number): Float32Array {
    const sum = reference.integral(data, width, height, false);
    const sumSq = reference.integral(data, width, height, true);
    const stride = width + 1;
    const out = new Float32Array(data.length);
    for (let y = 0; y < height; y++) {
      const y0 = Math.max(0, y - radius);
      const y1 = Math.min(height, y + radius + 1);
      for (let x = 0; x < width; x++) {
        const x0 = Math.max(0, x - radius);
        const x1 = Math.min(width, x + radius + 1);
        const n = (y1 - y0) * (x1 - x0);
        const s = sum[y1 * stride + x1] - sum[y0 * stride + x1] - sum[y1 * stride + x0] + sum[y0 * stride + x0];
        const s2 = sumSq[y1 * stride + x1] - sumSq[y0 * stride + x1] - sumSq[y1 * stride + x0] + sumSq[y0 * stride + x0];
        const mean = s / n;
        const std = Math.sqrt(Math.max(0, s2 / n - mean * mean));
        const v = (data[y * width + x] - mean) / Math.sqrt(std * std + minVariance);
        out[y * width + x] = v > 3 ? 3 : v < -3 ? -3 : v;
      }
    }
    return out;
  },
};

/** Index of the first value whose bits differ (so -0 and +0 differ too), or -1 when all are identical. */
function firstDifference(actual: Float32Array, expected: Float32Array): number {
  if (actual.length !== expected.length) return Math.min(actual.length, expected.length);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const b = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** Deterministic test image: a smooth pattern plus fine texture, at the given scale (grey levels, or small normalised values). */
function testImage(width: number, height: number, scale: number): Float32Array {
  return Float32Array.from({ length: width * height }, (_, i) => Math.abs(Math.sin(i * 0.37) * 2 + Math.cos(i * 0.011) * (i % 7)) * scale);
}

const SIZES = [
  [320, 257],
  [211, 320],
  [7, 5],
  [2, 2],
  [1, 9],
  [9, 1],
  [1, 1],
] as const;

describe.each(SIZES)("image kernel at %i x %i", (width, height) => {
  const images = [testImage(width, height, 40), testImage(width, height, 0.01)];

  it("box cascade, exact convolution, gradients, Hessian and contrast normalisation match the JavaScript loops bit for bit", () => {
    const taps = Float32Array.from([0.03, 0.11, 0.22, 0.28, 0.22, 0.11, 0.03]);
    for (const data of images) {
      expect(firstDifference(boxFilterCascade(data, width, height, [2, 2, 3]), reference.boxCascade(data, width, height, [2, 2, 3]))).toBe(-1);
      expect(firstDifference(convolveSeparable(data, width, height, taps), reference.convolve(data, width, height, taps))).toBe(-1);
      const { gx, gy } = centralGradients(data, width, height);
      const expected = reference.gradients(data, width, height);
      expect([firstDifference(gx, expected.gx), firstDifference(gy, expected.gy)]).toEqual([-1, -1]);
      expect(firstDifference(hessianDeterminant(data, width, height, 39.0625), reference.hessian(data, width, height, 39.0625))).toBe(-1);
      expect(firstDifference(normaliseLocalContrast(data, width, height, 17, 144), reference.normalise(data, width, height, 17, 144))).toBe(-1);
    }
  });
});
