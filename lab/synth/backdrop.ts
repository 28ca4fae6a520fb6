// What lies behind the nose in a "real" capture: a plain surface, a textured one (a carpet, a
// blanket), or one backdrop shared by every capture of the set (a clinic's patterned table), either
// periodic or textured. Backdrops are tileable textures in linear RGB, sampled on the backdrop plane.
import { BACKDROP } from "./parameters";
import { Rng, finalizeHash, hashSeed } from "./prng";

export const BACKDROP_KINDS = ["plain", "textured", "shared-periodic", "shared-textured"] as const;
export type BackdropKind = (typeof BACKDROP_KINDS)[number];

export interface TileTexture {
  /** Texels per side; the texture repeats. */
  size: number;
  /** Texels per nose unit on the backdrop plane. */
  scale: number;
  /** Interleaved linear RGB. */
  data: Float32Array;
}

export interface BackdropPlan {
  texture: TileTexture;
  /** Pose of the pattern on the backdrop plane. */
  angle: number;
  shiftX: number;
  shiftY: number;
  depth: number;
}

export function isShared(kind: BackdropKind): boolean {
  return kind === "shared-periodic" || kind === "shared-textured";
}

const sharedTextures = new Map<string, TileTexture>();

/**
 * The backdrop of one capture. Shared kinds draw their pattern from `setSeed` alone (the same in
 * every capture of every subject) and only its pose per capture; the others draw everything from
 * `rng`.
 */
export function planBackdrop(kind: BackdropKind, setSeed: number, rng: Rng): BackdropPlan {
  const depth = rng.between(BACKDROP.depth);
  const angle = rng.symmetric(Math.PI);
  if (isShared(kind)) {
    const key = `${kind}:${setSeed}`;
    let texture = sharedTextures.get(key);
    if (!texture) {
      const patternRng = new Rng(hashSeed(setSeed, 0xbacd));
      texture = kind === "shared-periodic" ? periodicTexture(patternRng) : noiseTexture(patternRng, BACKDROP.sharedTexturedPeriod);
      sharedTextures.set(key, texture);
    }
    // The animal sits at about the same place on the table: the shared textured pattern around the
    // nose overlaps between captures (a periodic one matches anywhere).
    const shift = kind === "shared-textured" ? BACKDROP.sharedShift : texture.size / texture.scale;
    return {
      texture,
      angle: kind === "shared-textured" ? rng.symmetric(BACKDROP.sharedTurn) : angle,
      shiftX: rng.symmetric(shift),
      shiftY: rng.symmetric(shift),
      depth,
    };
  }
  const texture = kind === "plain" ? plainTexture(rng) : noiseTexture(rng, rng.between(BACKDROP.texturedPeriod));
  return { texture, angle, shiftX: 0, shiftY: 0, depth };
}

/** Bilinear, wrapping fetch of the texture at plane point (x, y) into out[0..2]. */
export function sampleTile(texture: TileTexture, x: number, y: number, out: Float64Array): void {
  const n = texture.size;
  let tx = (x * texture.scale) % n;
  let ty = (y * texture.scale) % n;
  if (tx < 0) tx += n;
  if (ty < 0) ty += n;
  const ix = Math.floor(tx);
  const iy = Math.floor(ty);
  const fx = tx - ix;
  const fy = ty - iy;
  const x0 = ix % n;
  const y0 = iy % n;
  const x1 = (x0 + 1) % n;
  const y1 = (y0 + 1) % n;
  const d = texture.data;
  const a = (y0 * n + x0) * 3;
  const b = (y0 * n + x1) * 3;
  const c = (y1 * n + x0) * 3;
  const e = (y1 * n + x1) * 3;
  for (let ch = 0; ch < 3; ch++) {
    const top = d[a + ch]! + (d[b + ch]! - d[a + ch]!) * fx;
    const bottom = d[c + ch]! + (d[e + ch]! - d[c + ch]!) * fx;
    out[ch] = top + (bottom - top) * fy;
  }
}

function drawColour(rng: Rng): [number, number, number] {
  const level = rng.between(BACKDROP.albedo);
  const hue = rng.next() * 2 * Math.PI;
  const chroma = rng.between(BACKDROP.chroma);
  return [
    level * (1 + chroma * Math.cos(hue)),
    level * (1 + chroma * Math.cos(hue - (2 * Math.PI) / 3)),
    level * (1 + chroma * Math.cos(hue + (2 * Math.PI) / 3)),
  ];
}

/** The second colour of a pattern: printed and woven patterns have clear contrast. */
function darker(colour: [number, number, number], rng: Rng): [number, number, number] {
  const k = rng.between(BACKDROP.patternDarkening);
  const shift = drawColour(rng);
  const level = (shift[0] + shift[1] + shift[2]) / 3;
  // Mostly the same hue, darker, with a little of another colour.
  return [0, 1, 2].map((ch) => k * (0.75 * colour[ch]! + 0.25 * shift[ch]! * (colour[1] / Math.max(1e-6, level)))) as [number, number, number];
}

/** A uniform surface with a gentle tone gradient (one smooth texel ramp over a large tile). */
function plainTexture(rng: Rng): TileTexture {
  const base = drawColour(rng);
  const size = 4;
  const data = new Float32Array(size * size * 3);
  for (let t = 0; t < size * size; t++) {
    const shade = 1 + rng.symmetric(BACKDROP.plainVariation);
    for (let ch = 0; ch < 3; ch++) data[t * 3 + ch] = base[ch]! * shade;
  }
  return { size, scale: size / BACKDROP.plainPeriod, data };
}

/** Tileable fractal lattice noise between two colours: fabric, carpet, wood. */
function noiseTexture(rng: Rng, period: number): TileTexture {
  const size = BACKDROP.textureSize;
  const a = drawColour(rng);
  const b = darker(a, rng);
  const seed = rng.nextUint32();
  const stretch = rng.between(BACKDROP.grainStretch);
  const data = new Float32Array(size * size * 3);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let sum = 0;
      let amplitude = 0.5;
      let norm = 0;
      for (let octave = 0, cells = BACKDROP.noiseCells; octave < BACKDROP.noiseOctaves; octave++, cells *= 2) {
        const rows = Math.max(1, Math.round(cells / stretch));
        sum += amplitude * tiledNoise(seed + octave * 7919, (x / size) * cells, (y / size) * rows, cells, rows);
        norm += amplitude;
        amplitude *= BACKDROP.noisePersistence;
      }
      const t = Math.min(1, Math.max(0, 0.5 + (sum / norm - 0.5) * BACKDROP.noiseContrast));
      const o = (y * size + x) * 3;
      for (let ch = 0; ch < 3; ch++) data[o + ch] = a[ch]! + (b[ch]! - a[ch]!) * t;
    }
  }
  return { size, scale: size / period, data };
}

function tiledNoise(seed: number, x: number, y: number, cols: number, rows: number): number {
  const ix = Math.floor(x);
  const iy = Math.floor(y);
  const fx = x - ix;
  const fy = y - iy;
  const sx = fx * fx * (3 - 2 * fx);
  const sy = fy * fy * (3 - 2 * fy);
  const lattice = (i: number, j: number) =>
    finalizeHash(seed ^ Math.imul(i % cols, 0x27d4eb2d) ^ Math.imul(j % rows, 0x165667b1)) / 4294967296;
  const top = lattice(ix, iy) + (lattice(ix + 1, iy) - lattice(ix, iy)) * sx;
  const bottom = lattice(ix, iy + 1) + (lattice(ix + 1, iy + 1) - lattice(ix, iy + 1)) * sx;
  return top + (bottom - top) * sy;
}

/** One tile of a periodic pattern (checks, plaid, dots or stripes) in two or three colours. */
function periodicTexture(rng: Rng): TileTexture {
  const size = BACKDROP.textureSize;
  const repeats = rng.int(BACKDROP.periodicRepeats[0], BACKDROP.periodicRepeats[1]);
  const period = rng.between(BACKDROP.periodicPeriod);
  const a = drawColour(rng);
  const b = darker(a, rng);
  const c = drawColour(rng);
  const style = rng.int(0, 3);
  const duty = rng.range(0.3, 0.6);
  const data = new Float32Array(size * size * 3);
  const edge = (t: number) => {
    // Soft-edged square wave: printed patterns are not pixel-sharp.
    const f = t - Math.floor(t);
    const d = Math.min(Math.abs(f - duty / 2), Math.abs(f - 1 - duty / 2), Math.abs(f + 1 - duty / 2));
    return Math.min(1, Math.max(0, (duty / 2 - d) / 0.04 + 0.5));
  };
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const px = (x / size) * repeats;
      const py = (y / size) * repeats;
      let wA: number;
      let wC = 0;
      if (style === 0) wA = Math.abs(edge(px) - edge(py)); // checks
      else if (style === 1) {
        wA = edge(px); // plaid: two crossing stripe sets
        wC = 0.5 * edge(py * 2);
      } else if (style === 2) {
        const fx = px - Math.floor(px) - 0.5;
        const fy = py - Math.floor(py) - 0.5;
        wA = Math.min(1, Math.max(0, (duty * 0.6 - Math.hypot(fx, fy)) / 0.04 + 0.5)); // dots
      } else wA = edge(px + 0.5 * py); // diagonal stripes
      const o = (y * size + x) * 3;
      for (let ch = 0; ch < 3; ch++) {
        const base = b[ch]! + (a[ch]! - b[ch]!) * wA;
        data[o + ch] = base + (c[ch]! - base) * wC;
      }
    }
  }
  return { size, scale: size / (repeats * period), data };
}
