// Hair around the pad of a "real" capture: a tileable texture of short strands that multiplies the
// fur's albedo, so the muzzle carries the fine, oriented texture real crops show around the nose.
import { FUR } from "./parameters";
import { Rng, hashSeed } from "./prng";
import type { TileTexture } from "./backdrop";

const cache = new Map<string, TileTexture>();

/**
 * The hair texture of one moment (a luminance factor around 1 in all three channels). The direction the hair lies
 * belongs to the animal (`subjectSeed`); the strands themselves move, clump when wet and lie differently from one
 * photo session to the next, so they are drawn from `momentSeed`: frames of one burst share them, other captures do
 * not (decision 0021).
 */
export function furTexture(subjectSeed: number, momentSeed: number): TileTexture {
  const key = `${subjectSeed}:${momentSeed}`;
  let texture = cache.get(key);
  if (!texture) {
    const flow = new Rng(hashSeed(subjectSeed, 0xf0f0)).next() * 2 * Math.PI;
    texture = drawFur(flow, new Rng(hashSeed(momentSeed, 0xf0f1)));
    // The frames of a burst are rendered together: one entry is all the reuse there is.
    cache.clear();
    cache.set(key, texture);
  }
  return texture;
}

function drawFur(flow: number, rng: Rng): TileTexture {
  const size = FUR.textureSize;
  const sum = new Float32Array(size * size);
  const strands = Math.round(size * size * FUR.strandDensity);
  for (let s = 0; s < strands; s++) {
    const x0 = rng.next() * size;
    const y0 = rng.next() * size;
    const angle = flow + rng.symmetric(FUR.angleSpread);
    const length = rng.between(FUR.strandLength) * size;
    const tone = rng.symmetric(1);
    const dx = Math.cos(angle);
    const dy = Math.sin(angle);
    const bend = rng.symmetric(FUR.bend) / length;
    for (let t = 0; t < length; t++) {
      const x = Math.floor(x0 + dx * t - dy * bend * t * t) & (size - 1);
      const y = Math.floor(y0 + dy * t + dx * bend * t * t) & (size - 1);
      sum[y * size + x] = sum[y * size + x]! + tone;
    }
  }
  const data = new Float32Array(size * size * 3);
  for (let i = 0; i < size * size; i++) {
    const v = Math.max(FUR.minFactor, 1 + FUR.contrast * Math.tanh(sum[i]!));
    data[i * 3] = v;
    data[i * 3 + 1] = v;
    data[i * 3 + 2] = v;
  }
  return { size, scale: size / FUR.tilePeriod, data };
}
