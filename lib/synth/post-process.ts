// Camera-side image operations on interleaved linear RGB float buffers (optics, then sensor).
import { RENDER } from "./parameters";
import { normalTable } from "./prng";

export interface FloatImage {
  width: number;
  height: number;
  /** Interleaved RGB, linear light, display-relative (1.0 = clipping). */
  data: Float32Array;
}

/** Soft round light source, e.g. a droplet glint or a glare patch. */
export interface Blob {
  x: number;
  y: number;
  radiusX: number;
  radiusY: number;
  strength: number;
}

/** Uneven illumination: a linear falloff across the frame plus lens vignetting. */
export function applyIllumination(
  image: FloatImage,
  gradient: { dirX: number; dirY: number; strength: number },
  vignette: number,
): void {
  const { width, height, data } = image;
  const cx = width / 2;
  const cy = height / 2;
  const norm = 1 / Math.max(width, height);
  const diag2 = 1 / (cx * cx + cy * cy);
  for (let y = 0; y < height; y++) {
    const dy = y + 0.5 - cy;
    for (let x = 0; x < width; x++) {
      const dx = x + 0.5 - cx;
      const ramp = 1 + gradient.strength * (dx * gradient.dirX + dy * gradient.dirY) * norm;
      const v = 1 - vignette * (dx * dx + dy * dy) * diag2;
      const f = Math.max(0.05, ramp * v);
      const i = (y * width + x) * 3;
      data[i] = data[i]! * f;
      data[i + 1] = data[i + 1]! * f;
      data[i + 2] = data[i + 2]! * f;
    }
  }
}

/**
 * Adds axis-aligned Gaussian blobs. `washout` mixes the underlying pixel toward the blob
 * colour (glare hides texture) instead of only adding light (glints keep it).
 */
export function addBlobs(image: FloatImage, blobs: readonly Blob[], washout: number): void {
  const { width, height, data } = image;
  const rowWeights = new Float32Array(height);
  const colWeights = new Float32Array(width);
  for (const blob of blobs) {
    const x0 = Math.max(0, Math.floor(blob.x - 3 * blob.radiusX));
    const x1 = Math.min(width - 1, Math.ceil(blob.x + 3 * blob.radiusX));
    const y0 = Math.max(0, Math.floor(blob.y - 3 * blob.radiusY));
    const y1 = Math.min(height - 1, Math.ceil(blob.y + 3 * blob.radiusY));
    // Separable Gaussian: one exp per row and column instead of one per pixel.
    for (let x = x0; x <= x1; x++) {
      const d = (x + 0.5 - blob.x) / blob.radiusX;
      colWeights[x] = Math.exp(-0.5 * d * d);
    }
    for (let y = y0; y <= y1; y++) {
      const d = (y + 0.5 - blob.y) / blob.radiusY;
      rowWeights[y] = Math.exp(-0.5 * d * d) * blob.strength;
    }
    for (let y = y0; y <= y1; y++) {
      const ry = rowWeights[y]!;
      for (let x = x0; x <= x1; x++) {
        const w = ry * colWeights[x]!;
        const i = (y * width + x) * 3;
        const keep = 1 - washout * Math.min(1, w);
        data[i] = data[i]! * keep + w;
        data[i + 1] = data[i + 1]! * keep + w;
        data[i + 2] = data[i + 2]! * keep + w;
      }
    }
  }
}

export interface KernelTap {
  dx: number;
  dy: number;
  weight: number;
}

/**
 * Convolves with a sparse kernel of integer taps (gather form: one pass over the image, taps in
 * the inner loop). Border pixels clamp their taps to the image.
 */
export function convolveTaps(image: FloatImage, taps: readonly KernelTap[]): FloatImage {
  const { width, height, data } = image;
  const n = taps.length;
  const offsets = new Int32Array(n);
  const weights = new Float32Array(n);
  const dxs = new Int32Array(n);
  const dys = new Int32Array(n);
  let left = 0;
  let right = 0;
  let up = 0;
  let down = 0;
  taps.forEach((tap, t) => {
    offsets[t] = (tap.dy * width + tap.dx) * 3;
    weights[t] = tap.weight;
    dxs[t] = tap.dx;
    dys[t] = tap.dy;
    left = Math.max(left, -tap.dx);
    right = Math.max(right, tap.dx);
    up = Math.max(up, -tap.dy);
    down = Math.max(down, tap.dy);
  });
  const out = new Float32Array(data.length);
  for (let y = 0; y < height; y++) {
    const rowInterior = y >= up && y < height - down;
    for (let x = 0; x < width; x++) {
      const base = (y * width + x) * 3;
      let r = 0;
      let g = 0;
      let b = 0;
      if (rowInterior && x >= left && x < width - right) {
        for (let t = 0; t < n; t++) {
          const o = base + offsets[t]!;
          const w = weights[t]!;
          r += w * data[o]!;
          g += w * data[o + 1]!;
          b += w * data[o + 2]!;
        }
      } else {
        for (let t = 0; t < n; t++) {
          const sx = Math.min(width - 1, Math.max(0, x + dxs[t]!));
          const sy = Math.min(height - 1, Math.max(0, y + dys[t]!));
          const o = (sy * width + sx) * 3;
          const w = weights[t]!;
          r += w * data[o]!;
          g += w * data[o + 1]!;
          b += w * data[o + 2]!;
        }
      }
      out[base] = r;
      out[base + 1] = g;
      out[base + 2] = b;
    }
  }
  return { width, height, data: out };
}

/** Defocus approximated by a separable Gaussian point-spread function. */
export function gaussianBlur(image: FloatImage, sigma: number): FloatImage {
  const radius = Math.max(1, Math.ceil(2.5 * sigma));
  const weights: number[] = [];
  let total = 0;
  for (let i = -radius; i <= radius; i++) {
    const w = Math.exp((-0.5 * i * i) / (sigma * sigma));
    weights.push(w);
    total += w;
  }
  const horizontal: KernelTap[] = weights.map((w, i) => ({ dx: i - radius, dy: 0, weight: w / total }));
  const vertical: KernelTap[] = weights.map((w, i) => ({ dx: 0, dy: i - radius, weight: w / total }));
  return convolveTaps(convolveTaps(image, horizontal), vertical);
}

/** Linear motion-blur kernel: an anti-aliased line segment rasterised into integer taps. */
export function motionKernel(length: number, angle: number): KernelTap[] {
  const half = Math.ceil(length / 2) + 1;
  const size = 2 * half + 1;
  const grid = new Float64Array(size * size);
  const steps = Math.max(2, Math.ceil(length * 4));
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  for (let s = 0; s <= steps; s++) {
    const t = (s / steps - 0.5) * length;
    const x = t * cos + half;
    const y = t * sin + half;
    const ix = Math.floor(x);
    const iy = Math.floor(y);
    const fx = x - ix;
    const fy = y - iy;
    grid[iy * size + ix]! += (1 - fx) * (1 - fy);
    grid[iy * size + ix + 1]! += fx * (1 - fy);
    grid[(iy + 1) * size + ix]! += (1 - fx) * fy;
    grid[(iy + 1) * size + ix + 1]! += fx * fy;
  }
  let total = 0;
  let peak = 0;
  for (const w of grid) {
    total += w;
    peak = Math.max(peak, w);
  }
  const taps: KernelTap[] = [];
  let kept = 0;
  // Negligible corner weights are dropped: they cost a full pass each and change nothing visible.
  for (let i = 0; i < grid.length; i++) {
    if (grid[i]! > peak * 0.03) {
      taps.push({ dx: (i % size) - half, dy: Math.floor(i / size) - half, weight: grid[i]! });
      kept += grid[i]!;
    }
  }
  for (const tap of taps) tap.weight /= kept || total;
  return taps;
}

/** Mean luminance over the central region, as a phone's centre-weighted auto-exposure meters. */
export function meteredLuminance(image: FloatImage): number {
  const { width, height, data } = image;
  let sum = 0;
  let n = 0;
  const x0 = Math.floor(width * 0.2);
  const x1 = Math.ceil(width * 0.8);
  const y0 = Math.floor(height * 0.2);
  const y1 = Math.ceil(height * 0.8);
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * width + x) * 3;
      sum += 0.2126 * data[i]! + 0.7152 * data[i + 1]! + 0.0722 * data[i + 2]!;
      n++;
    }
  }
  return n > 0 ? sum / n : 0;
}

export function scaleImage(image: FloatImage, factor: number): void {
  const { data } = image;
  for (let i = 0; i < data.length; i++) data[i] = data[i]! * factor;
}

export interface SensorModel {
  gamma: number;
  /** Noise sigma in 8-bit units at black and the shot-noise slope (sigma grows with √signal). */
  noiseFloor: number;
  noiseShot: number;
  seed: number;
}

const noiseTables = new Map<number, Float32Array>();

function sharedNoiseTable(): Float32Array {
  let table = noiseTables.get(RENDER.noiseTableSize);
  if (!table) {
    table = normalTable(RENDER.noiseTableSize, 0x0a15e);
    noiseTables.set(RENDER.noiseTableSize, table);
  }
  return table;
}

/** Tone curve, then signal-dependent sensor noise, quantised to 8-bit RGB. */
export function toEightBit(image: FloatImage, sensor: SensorModel): Buffer {
  const lutSize = RENDER.toneLutSize;
  const lut = new Float32Array(lutSize);
  const invGamma = 1 / sensor.gamma;
  const sigmaLut = new Float32Array(lutSize);
  for (let i = 0; i < lutSize; i++) {
    lut[i] = 255 * Math.pow(i / (lutSize - 1), invGamma);
    sigmaLut[i] = sensor.noiseFloor + sensor.noiseShot * Math.sqrt(lut[i]!);
  }
  const table = sharedNoiseTable();
  const mask = table.length - 1;
  const { data } = image;
  const out = Buffer.allocUnsafe(data.length);
  let state = sensor.seed >>> 0 || 1;
  const pixels = data.length / 3;
  for (let p = 0; p < pixels; p++) {
    // xorshift32: one draw yields three 10-bit table indices (luma + two chroma components).
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const luma = table[state & mask]!;
    const chromaA = table[(state >>> 10) & mask]! * 0.5;
    const chromaB = table[(state >>> 20) & mask]! * 0.5;
    const i = p * 3;
    for (let c = 0; c < 3; c++) {
      const v = data[i + c]!;
      const idx = v <= 0 ? 0 : v >= 1 ? lutSize - 1 : (v * (lutSize - 1) + 0.5) | 0;
      const level = lut[idx]!;
      const sigma = sigmaLut[idx]!;
      const n = c === 0 ? luma + chromaA : c === 1 ? luma : luma + chromaB;
      const q = (level + sigma * n + 0.5) | 0;
      out[i + c] = q < 0 ? 0 : q > 255 ? 255 : q;
    }
  }
  return out;
}
