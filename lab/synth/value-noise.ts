// Smooth lattice value noise for low-frequency fields (pigment patches, mottling).
import { finalizeHash } from "./prng";

function latticeValue(seed: number, ix: number, iy: number): number {
  const h = finalizeHash(seed ^ Math.imul(ix, 0x27d4eb2d) ^ Math.imul(iy, 0x165667b1));
  return h / 4294967296;
}

function smooth(t: number): number {
  return t * t * (3 - 2 * t);
}

/** Value noise in [0, 1) at (x, y) with unit lattice spacing. */
export function valueNoise(seed: number, x: number, y: number): number {
  const ix = Math.floor(x);
  const iy = Math.floor(y);
  const fx = smooth(x - ix);
  const fy = smooth(y - iy);
  const a = latticeValue(seed, ix, iy);
  const b = latticeValue(seed, ix + 1, iy);
  const c = latticeValue(seed, ix, iy + 1);
  const d = latticeValue(seed, ix + 1, iy + 1);
  const top = a + (b - a) * fx;
  const bottom = c + (d - c) * fx;
  return top + (bottom - top) * fy;
}

/** Fractal sum centred on 0 (range roughly [-0.5, 0.5]). */
export function fractalNoise(seed: number, x: number, y: number, octaves: number): number {
  let sum = 0;
  let amplitude = 0.5;
  let frequency = 1;
  let norm = 0;
  for (let o = 0; o < octaves; o++) {
    sum += amplitude * (valueNoise(seed + o * 1013, x * frequency, y * frequency) - 0.5);
    norm += amplitude;
    amplitude *= 0.5;
    frequency *= 2.03;
  }
  return sum / norm;
}
