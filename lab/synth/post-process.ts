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
export interface LightBlob {
  x: number;
  y: number;
  radiusX: number;
  radiusY: number;
  strength: number;
}

/** Uneven illumination: a linear falloff across the frame plus lens vignetting. */
export function applyIllumination(
  image: FloatImage,
  exposure: number,
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
      const f = exposure * Math.max(0.05, ramp * v);
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
export function addBlobs(image: FloatImage, blobs: readonly LightBlob[], washout: number): void {
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

/**
 * Linear motion blur: a box of `length` px along `angle`, evaluated with running sums along
 * digital lines, so the cost per pixel does not grow with the length. Fractional lengths weight
 * the two end samples; the image edge is extended (clamped).
 */
export function lineBlur(image: FloatImage, length: number, angle: number, slot: string): FloatImage {
  const { width, height, data } = image;
  const out = scratchFloats(slot, data.length);
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const horizontal = Math.abs(cos) >= Math.abs(sin);
  const majorLen = horizontal ? width : height;
  const minorLen = horizontal ? height : width;
  const slope = horizontal ? sin / cos : cos / sin;
  // A segment of the given length covers length·|cos| pixels along the major axis.
  const half = Math.max(0, (length * (horizontal ? Math.abs(cos) : Math.abs(sin)) - 1) / 2);
  const r = Math.floor(half);
  const frac = half - r;
  const norm = 1 / (2 * r + 1 + 2 * frac);
  const pad = r + 1;
  const offsets = new Int32Array(majorLen);
  let minOff = 0;
  let maxOff = 0;
  for (let m = 0; m < majorLen; m++) {
    offsets[m] = Math.round(m * slope);
    minOff = Math.min(minOff, offsets[m]!);
    maxOff = Math.max(maxOff, offsets[m]!);
  }
  const line = scratchFloats(`${slot}-line`, (majorLen + 2 * pad) * 3);
  // Element strides of one step along the major / minor axis.
  const majorStride = horizontal ? 3 : width * 3;
  const minorStride = horizontal ? width * 3 : 3;
  const pixels = scratchInts(`${slot}-px`, majorLen);
  for (let base = -maxOff; base < minorLen - minOff; base++) {
    // Offsets are monotonic, so the in-image part of each digital line is one contiguous run.
    let m0 = -1;
    let m1 = -1;
    for (let m = 0; m < majorLen; m++) {
      const minor = base + offsets[m]!;
      if (minor >= 0 && minor < minorLen) {
        if (m0 < 0) m0 = m;
        m1 = m;
      }
    }
    if (m0 < 0) continue;
    const n = m1 - m0 + 1;
    for (let j = 0; j < n; j++) pixels[j] = (m0 + j) * majorStride + (base + offsets[m0 + j]!) * minorStride;
    for (let j = 0; j < n; j++) {
      const src = pixels[j]!;
      const dst = (pad + j) * 3;
      line[dst] = data[src]!;
      line[dst + 1] = data[src + 1]!;
      line[dst + 2] = data[src + 2]!;
    }
    for (let j = 0; j < pad; j++) {
      for (let c = 0; c < 3; c++) {
        line[j * 3 + c] = line[pad * 3 + c]!;
        line[(pad + n + j) * 3 + c] = line[(pad + n - 1) * 3 + c]!;
      }
    }
    for (let c = 0; c < 3; c++) {
      let sum = 0;
      for (let k = -r; k <= r; k++) sum += line[(pad + k) * 3 + c]!;
      for (let j = 0; j < n; j++) {
        const center = pad + j;
        const value = (sum + frac * (line[(center - r - 1) * 3 + c]! + line[(center + r + 1) * 3 + c]!)) * norm;
        out[pixels[j]! + c] = value;
        sum += line[(center + r + 1) * 3 + c]! - line[(center - r) * 3 + c]!;
      }
    }
  }
  return { width, height, data: out };
}

/**
 * Defocus: a real defocus PSF is a pillbox (disc), not a Gaussian; a separable square box of the
 * same variance (L²/12 = σ²) is close at these small radii and costs two running-sum passes.
 */
export function defocusBlur(image: FloatImage, sigma: number): FloatImage {
  const length = sigma * Math.sqrt(12);
  return lineBlur(lineBlur(image, length, 0, "defocus-h"), length, Math.PI / 2, "defocus-v");
}

/**
 * Mean luminance over the central region, as a phone's centre-weighted auto-exposure meters;
 * `margin` is the fraction of each side left out (0 meters the whole image).
 */
export function meteredLuminance(image: FloatImage, margin = 0.2): number {
  const { width, height, data } = image;
  let sum = 0;
  let n = 0;
  const x0 = Math.floor(width * margin);
  const x1 = Math.ceil(width * (1 - margin));
  const y0 = Math.floor(height * margin);
  const y1 = Math.ceil(height * (1 - margin));
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * width + x) * 3;
      sum += 0.2126 * data[i]! + 0.7152 * data[i + 1]! + 0.0722 * data[i + 2]!;
      n++;
    }
  }
  return n > 0 ? sum / n : 0;
}

export interface SensorModel {
  gamma: number;
  /**
   * Strength (0–1) of an S-shaped tone curve after the gamma, as phone pipelines apply: darks
   * darker, lights lighter. Omitted: the plain gamma curve.
   */
  toneContrast?: number;
  /** Noise sigma in 8-bit units at black and the shot-noise slope (sigma grows with √signal). */
  noiseFloor: number;
  noiseShot: number;
  seed: number;
}

/**
 * Grow-only scratch buffers reused across captures: per-image allocations of several hundred KB
 * otherwise dominate garbage-collection time at thousands of images. Callers own a slot until
 * their next call with the same slot name.
 */
const scratchBuffers = new Map<string, Float32Array>();

export function scratchFloats(slot: string, length: number): Float32Array {
  let buffer = scratchBuffers.get(slot);
  if (!buffer || buffer.length < length) {
    buffer = new Float32Array(Math.ceil(length * 1.25));
    scratchBuffers.set(slot, buffer);
  }
  const view = buffer.subarray(0, length);
  view.fill(0);
  return view;
}

const scratchIntBuffers = new Map<string, Int32Array>();

function scratchInts(slot: string, length: number): Int32Array {
  let buffer = scratchIntBuffers.get(slot);
  if (!buffer || buffer.length < length) {
    buffer = new Int32Array(Math.ceil(length * 1.25) + 16);
    scratchIntBuffers.set(slot, buffer);
  }
  return buffer;
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
    if (sensor.toneContrast) {
      const x = lut[i]! / 255;
      lut[i] = 255 * (x + sensor.toneContrast * x * (1 - x) * (2 * x - 1));
    }
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
    out[i] = quantize(data[i]!, lut, sigmaLut, luma + chromaA);
    out[i + 1] = quantize(data[i + 1]!, lut, sigmaLut, luma);
    out[i + 2] = quantize(data[i + 2]!, lut, sigmaLut, luma + chromaB);
  }
  return out;
}

function quantize(v: number, lut: Float32Array, sigmaLut: Float32Array, noise: number): number {
  const last = lut.length - 1;
  const idx = v <= 0 ? 0 : v >= 1 ? last : (v * last + 0.5) | 0;
  const q = (lut[idx]! + sigmaLut[idx]! * noise + 0.5) | 0;
  return q < 0 ? 0 : q > 255 ? 255 : q;
}
