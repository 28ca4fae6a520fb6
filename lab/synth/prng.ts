// Deterministic randomness. Math.random is never used: every image must be reproducible from
// (dataset seed, subject index, capture index) alone, independent of worker scheduling.

/** Mixes any number of 32-bit integers into one well-distributed 32-bit seed. */
export function hashSeed(...values: number[]): number {
  let h = 0x9e3779b9 | 0;
  for (const value of values) {
    h = Math.imul(h ^ (value | 0), 0x85ebca6b);
    h = (h << 13) | (h >>> 19);
    h = Math.imul(h, 0xc2b2ae35) ^ 0x27d4eb2f;
  }
  return finalizeHash(h);
}

/** murmur3 finaliser: cheap avalanche for per-texel / per-plaque hashing. */
export function finalizeHash(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32 stream with helpers for the distributions the generator needs. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Raw 32-bit output. */
  nextUint32(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  between(bounds: readonly [number, number]): number {
    return this.range(bounds[0], bounds[1]);
  }

  /** Integer in [min, max] inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Symmetric uniform in [-magnitude, magnitude]. */
  symmetric(magnitude: number): number {
    return (this.next() * 2 - 1) * magnitude;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** Standard normal (Box–Muller); only used for per-capture parameters, not per pixel. */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Independent child stream, so adding draws in one stage never shifts another stage. */
  fork(label: number): Rng {
    return new Rng(hashSeed(this.nextUint32(), label));
  }
}

/** Table of standard-normal deviates so per-pixel noise costs one table lookup. */
export function normalTable(size: number, seed: number): Float32Array {
  const rng = new Rng(seed);
  const table = new Float32Array(size);
  for (let i = 0; i < size; i++) table[i] = rng.normal();
  return table;
}
