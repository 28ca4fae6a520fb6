import { createGreyImage, type GreyImage } from "./grey-image";
import { NORMALISE_MIN_STD, NORMALISE_SIGMA } from "./parameters";

/** Summed-area table with a zero row and column, so box sums need no branches. */
function integral(values: Float32Array, width: number, height: number, square: boolean): Float64Array {
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
}

/**
 * Local contrast normalisation: (I - local mean) / local std over a box about 2 sigma wide.
 * It removes lighting gradients and pigment patches so that only the bead-and-groove relief remains;
 * box sums via integral images keep it O(1) per pixel.
 */
export function normaliseContrast(image: GreyImage): GreyImage {
  const { width, height, data } = image;
  const sum = integral(data, width, height, false);
  const sumSq = integral(data, width, height, true);
  const radius = Math.round(NORMALISE_SIGMA * 1.7);
  const stride = width + 1;
  const out = new Float32Array(width * height);
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
      // A soft floor: flat, noisy background (fur, table) stays faint instead of being stretched into texture.
      const v = (data[y * width + x] - mean) / Math.sqrt(std * std + NORMALISE_MIN_STD * NORMALISE_MIN_STD);
      out[y * width + x] = v > 3 ? 3 : v < -3 ? -3 : v;
    }
  }
  return createGreyImage(width, height, out);
}

