// A synthetic nose pad (rhinarium): a stable, subject-specific surface made of bead-like plaques
// (a Voronoi tessellation of Poisson-disk seeds with spatially varying spacing), separated by dark
// grooves, plus two crescent nostrils, a philtrum and a pigment field.
// Coordinates: continuous nose units, pad ≈ [-1, 1]², x right, y down.
import { PIGMENT, REAL_PIGMENT, SURFACE } from "./parameters";
import { Rng, finalizeHash, hashSeed } from "./prng";
import { fractalNoise, valueNoise } from "./value-noise";

export interface PadOutline {
  radiusX: number;
  radiusY: number;
  centerY: number;
  exponent: number;
  /** Depth of the notch in the dorsal (top) margin; many dogs have one. */
  topNotch: number;
}

export interface Nostril {
  centerX: number;
  centerY: number;
  radiusX: number;
  radiusY: number;
  /** Rotation of the nostril frame (radians). */
  tilt: number;
  /** Alar fold ellipse centre in the nostril frame (nose units); carves the crescent. */
  alarOffsetX: number;
  alarOffsetY: number;
  alarScale: number;
}

export interface Philtrum {
  top: number;
  x: number;
  /** Sideways drift per unit length squared: philtra are rarely perfectly straight. */
  bend: number;
  widthTop: number;
  widthBottom: number;
}

export interface Pigment {
  dark: [number, number, number];
  pink: [number, number, number];
  fur: [number, number, number];
  /** 0 for fully pigmented noses. */
  pinkAmount: number;
  pinkThreshold: number;
  pinkScale: number;
  noiseSeed: number;
}

export interface PlaqueField {
  count: number;
  x: Float64Array;
  y: Float64Array;
  /** Local spacing at the seed: sets groove width and dome radius of that bead. */
  spacing: Float64Array;
  height: Float64Array;
  brightness: Float64Array;
}

/** Uniform grid over the plaque seeds (CSR layout) for nearest-seed queries. */
export interface SeedGrid {
  originX: number;
  originY: number;
  cellSize: number;
  cols: number;
  rows: number;
  cellStart: Int32Array;
  items: Int32Array;
}

export interface NoseSubject {
  seed: number;
  plaqueScale: number;
  pad: PadOutline;
  nostrils: [Nostril, Nostril];
  philtrum: Philtrum;
  pigment: Pigment;
  plaques: PlaqueField;
  grid: SeedGrid;
}

export interface SurfaceSample {
  /** Relief height in nose units. */
  height: number;
  /** Linear RGB albedo. */
  r: number;
  g: number;
  b: number;
  /** Index of the bead under the point, or -1 on fur, in a nostril or in a groove. */
  plaque: number;
}

/**
 * A subject's nose. `pigment: "real"` recolours it as real noses are (black to liver-brown, some
 * pads with pink or brown patches) from a stream of its own: the geometry is the same either way.
 */
export function createNoseSubject(seed: number, options: { pigment?: "real" } = {}): NoseSubject {
  const rng = new Rng(hashSeed(seed, 0x5eed));
  const pad = createPadOutline(rng.fork(1));
  const nostrils = createNostrils(rng.fork(2));
  const philtrum = createPhiltrum(rng.fork(3));
  let pigment = createPigment(rng.fork(4));
  const plaqueScale = rng.fork(5).between(SURFACE.plaqueScaleRange);
  const shape = { pad, nostrils, philtrum, plaqueScale };
  const plaques = samplePlaques(shape, rng.fork(6));
  const grid = buildSeedGrid(plaques, SURFACE.plaqueSpacingMax * plaqueScale * 0.5);
  if (options.pigment === "real") pigment = createRealPigment(rng.fork(7), pigment);
  return { seed, plaqueScale, pad, nostrils, philtrum, pigment, plaques, grid };
}

function createPadOutline(rng: Rng): PadOutline {
  return {
    radiusX: rng.between(SURFACE.padRadiusX),
    radiusY: rng.between(SURFACE.padRadiusY),
    centerY: rng.range(-0.05, 0.05),
    exponent: rng.between(SURFACE.padExponentRange),
    topNotch: rng.chance(0.6) ? rng.range(0.03, 0.12) : 0,
  };
}

function createNostrils(rng: Rng): [Nostril, Nostril] {
  const base = {
    x: rng.between(SURFACE.nostrilCenterX),
    y: rng.between(SURFACE.nostrilCenterY),
    rx: rng.between(SURFACE.nostrilRadiusX),
    ry: rng.between(SURFACE.nostrilRadiusY),
    tilt: rng.between(SURFACE.nostrilTilt),
    shift: rng.between(SURFACE.alarShift),
    scale: rng.between(SURFACE.alarScale),
  };
  // Real noses are only roughly symmetric, so each side gets a small independent perturbation.
  const side = (sign: -1 | 1): Nostril => {
    const rx = base.rx * (1 + rng.symmetric(0.06));
    const ry = base.ry * (1 + rng.symmetric(0.06));
    const shift = base.shift * (1 + rng.symmetric(0.1));
    return {
      centerX: sign * (base.x + rng.symmetric(0.03)),
      centerY: base.y + rng.symmetric(0.03),
      radiusX: rx,
      radiusY: ry,
      tilt: -sign * (base.tilt + rng.symmetric(0.08)),
      // Alar fold sits medially and slightly up, so the opening wraps around it laterally.
      alarOffsetX: -sign * shift * rx,
      alarOffsetY: -0.25 * shift * ry,
      alarScale: base.scale * (1 + rng.symmetric(0.04)),
    };
  };
  return [side(-1), side(1)];
}

function createPhiltrum(rng: Rng): Philtrum {
  return {
    top: rng.between(SURFACE.philtrumTop),
    x: rng.symmetric(0.04),
    bend: rng.symmetric(0.06),
    widthTop: rng.between(SURFACE.philtrumWidthTop),
    widthBottom: rng.between(SURFACE.philtrumWidthBottom),
  };
}

function createPigment(rng: Rng): Pigment {
  const level = rng.between(PIGMENT.darkAlbedo);
  const tint = rng.between(PIGMENT.darkTint);
  const furLevel = rng.between(PIGMENT.furAlbedo);
  const furWarmth = rng.range(0, 0.5);
  const hasPink = rng.chance(SURFACE.pinkSubjectProbability);
  return {
    dark: [level * (1 + 0.5 * tint), level, level * (1 - 0.4 * tint)],
    pink: [PIGMENT.pink[0], PIGMENT.pink[1], PIGMENT.pink[2]],
    fur: [furLevel * (1 + furWarmth), furLevel, furLevel * (1 - 0.6 * furWarmth)],
    pinkAmount: hasPink ? rng.range(0.6, 1) : 0,
    pinkThreshold: rng.between(SURFACE.pinkThreshold),
    pinkScale: rng.between(SURFACE.pinkNoiseScale),
    noiseSeed: rng.nextUint32(),
  };
}

function createRealPigment(rng: Rng, base: Pigment): Pigment {
  const level = rng.between(REAL_PIGMENT.darkAlbedo);
  const tint = rng.between(REAL_PIGMENT.tint);
  const patched = rng.chance(REAL_PIGMENT.patchedProbability);
  const patch = rng.chance(REAL_PIGMENT.pinkPatchProbability) ? PIGMENT.pink : REAL_PIGMENT.brown;
  const fur = rng.between(REAL_PIGMENT.furAlbedo) / Math.max(1e-6, base.fur[1]);
  return {
    ...base,
    fur: [base.fur[0] * fur, base.fur[1] * fur, base.fur[2] * fur],
    dark: [level * (1 + 0.6 * tint), level, level * (1 - 0.45 * tint)],
    pink: [patch[0], patch[1], patch[2]],
    pinkAmount: patched ? rng.range(0.6, 1) : 0,
  };
}

// ---------------------------------------------------------------------------------------------
// Pad shape fields

/** Superellipse value: < 1 inside the pad, 1 on its outline. */
export function padShapeValue(pad: PadOutline, x: number, y: number): number {
  // The dorsal notch pulls the top margin down near the midline.
  const notch = pad.topNotch * Math.exp(-(x * x) / 0.06);
  const dy = y - pad.centerY;
  const ny = dy < 0 ? (dy + notch) / (pad.radiusY + notch) : dy / pad.radiusY;
  return Math.pow(Math.abs(x / pad.radiusX), pad.exponent) + Math.pow(Math.abs(ny), pad.exponent);
}

function smoothstep(edge0: number, edge1: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
}

function philtrumCenterX(philtrum: Philtrum, y: number): number {
  const t = y - philtrum.top;
  return philtrum.x + philtrum.bend * t * t;
}

/** Plaque spacing field: small beads near nostrils, philtrum and margins; large at centre/top. */
function plaqueSpacingAt(
  shape: Pick<NoseSubject, "pad" | "nostrils" | "philtrum" | "plaqueScale">,
  x: number,
  y: number,
): number {
  let f = 1;
  for (const n of shape.nostrils) {
    const d = Math.hypot((x - n.centerX) / n.radiusX, (y - n.centerY) / n.radiusY);
    f *= 0.12 + 0.88 * smoothstep(0.9, 2.6, d);
  }
  const p = shape.philtrum;
  if (y > p.top - 0.25) {
    const dx = Math.abs(x - philtrumCenterX(p, y));
    const along = smoothstep(p.top - 0.25, p.top + 0.1, y);
    f *= 1 - along * 0.8 * (1 - smoothstep(0.02, 0.4, dx));
  }
  f *= 0.7 + 0.3 * smoothstep(0.7, -0.4, y);
  const q = padShapeValue(shape.pad, x, y);
  f *= 0.45 + 0.55 * smoothstep(1.05, 0.55, q);
  const spacing = SURFACE.plaqueSpacingMin + (SURFACE.plaqueSpacingMax - SURFACE.plaqueSpacingMin) * f;
  return spacing * shape.plaqueScale;
}

// ---------------------------------------------------------------------------------------------
// Plaque seeds: Bridson Poisson-disk sampling with a variable radius

function samplePlaques(
  shape: Pick<NoseSubject, "pad" | "nostrils" | "philtrum" | "plaqueScale">,
  rng: Rng,
): PlaqueField {
  const extent = 1.25;
  const maxSpacing = SURFACE.plaqueSpacingMax * shape.plaqueScale;
  const cell = maxSpacing * 0.5;
  const cols = Math.ceil((2 * extent) / cell);
  const buckets: number[][] = Array.from({ length: cols * cols }, () => []);
  const reach = Math.ceil(maxSpacing / cell);
  const xs: number[] = [];
  const ys: number[] = [];
  const sp: number[] = [];

  const fields = tabulateShapeFields(shape, extent);
  const inDomain = (x: number, y: number) =>
    Math.abs(x) < extent && Math.abs(y) < extent && sampleTable(fields, x, y, 0) < 1.25;
  const cellOf = (v: number) => Math.min(cols - 1, Math.max(0, Math.floor((v + extent) / cell)));
  const isFree = (x: number, y: number, s: number) => {
    const cx = cellOf(x);
    const cy = cellOf(y);
    for (let j = Math.max(0, cy - reach); j <= Math.min(cols - 1, cy + reach); j++) {
      for (let i = Math.max(0, cx - reach); i <= Math.min(cols - 1, cx + reach); i++) {
        for (const k of buckets[j * cols + i]!) {
          const need = 0.5 * (s + sp[k]!);
          const dx = x - xs[k]!;
          const dy = y - ys[k]!;
          if (dx * dx + dy * dy < need * need) return false;
        }
      }
    }
    return true;
  };
  const add = (x: number, y: number, s: number) => {
    buckets[cellOf(y) * cols + cellOf(x)]!.push(xs.length);
    xs.push(x);
    ys.push(y);
    sp.push(s);
    return xs.length - 1;
  };

  const active = [add(0, -0.2, plaqueSpacingAt(shape, 0, -0.2))];
  while (active.length > 0) {
    const slot = Math.floor(rng.next() * active.length);
    const k = active[slot]!;
    let placed = false;
    for (let attempt = 0; attempt < SURFACE.poissonAttempts; attempt++) {
      const angle = rng.next() * 2 * Math.PI;
      const dist = sp[k]! * (1 + rng.next() * 0.6);
      const x = xs[k]! + Math.cos(angle) * dist;
      const y = ys[k]! + Math.sin(angle) * dist;
      if (!inDomain(x, y)) continue;
      const s = sampleTable(fields, x, y, 1) * (1 + rng.symmetric(0.15));
      if (!isFree(x, y, s)) continue;
      active.push(add(x, y, s));
      placed = true;
    }
    if (!placed) active.splice(slot, 1);
  }

  const count = xs.length;
  const height = new Float64Array(count);
  const brightness = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    height[i] = rng.between(SURFACE.plaqueHeightRange);
    brightness[i] = rng.between(SURFACE.plaqueBrightnessRange);
  }
  return {
    count,
    x: Float64Array.from(xs),
    y: Float64Array.from(ys),
    spacing: Float64Array.from(sp),
    height,
    brightness,
  };
}

interface ShapeTable {
  extent: number;
  size: number;
  /** Per node: pad shape value, plaque spacing. */
  values: Float64Array;
}

/** Both fields are smooth and Bridson queries them ~20k times, so a coarse table suffices. */
function tabulateShapeFields(
  shape: Pick<NoseSubject, "pad" | "nostrils" | "philtrum" | "plaqueScale">,
  extent: number,
): ShapeTable {
  const size = SURFACE.shapeTableSize;
  const values = new Float64Array(size * size * 2);
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < size; i++) {
      const x = -extent + (2 * extent * i) / (size - 1);
      const y = -extent + (2 * extent * j) / (size - 1);
      values[(j * size + i) * 2] = padShapeValue(shape.pad, x, y);
      values[(j * size + i) * 2 + 1] = plaqueSpacingAt(shape, x, y);
    }
  }
  return { extent, size, values };
}

function sampleTable(table: ShapeTable, x: number, y: number, channel: number): number {
  const last = table.size - 1;
  const fx = Math.min(last - 1e-9, Math.max(0, ((x + table.extent) / (2 * table.extent)) * last));
  const fy = Math.min(last - 1e-9, Math.max(0, ((y + table.extent) / (2 * table.extent)) * last));
  const i = Math.floor(fx);
  const j = Math.floor(fy);
  const u = fx - i;
  const v = fy - j;
  const w = table.values;
  const a = (j * table.size + i) * 2 + channel;
  const b = a + 2;
  const c = a + table.size * 2;
  const d = c + 2;
  return (w[a]! * (1 - u) + w[b]! * u) * (1 - v) + (w[c]! * (1 - u) + w[d]! * u) * v;
}

function buildSeedGrid(plaques: PlaqueField, cellSize: number): SeedGrid {
  const extent = 1.3;
  const cols = Math.ceil((2 * extent) / cellSize);
  const rows = cols;
  const cellOf = (x: number, y: number) => {
    const i = Math.min(cols - 1, Math.max(0, Math.floor((x + extent) / cellSize)));
    const j = Math.min(rows - 1, Math.max(0, Math.floor((y + extent) / cellSize)));
    return j * cols + i;
  };
  const counts = new Int32Array(cols * rows + 1);
  for (let k = 0; k < plaques.count; k++) counts[cellOf(plaques.x[k]!, plaques.y[k]!) + 1]!++;
  for (let c = 0; c < cols * rows; c++) counts[c + 1]! += counts[c]!;
  const cursor = counts.slice(0, cols * rows);
  const items = new Int32Array(plaques.count);
  for (let k = 0; k < plaques.count; k++) items[cursor[cellOf(plaques.x[k]!, plaques.y[k]!)]!++] = k;
  return { originX: -extent, originY: -extent, cellSize, cols, rows, cellStart: counts, items };
}

/** Result of a two-nearest-seed query (Worley F1/F2). */
interface NearestPair {
  first: number;
  second: number;
  d1: number;
  d2: number;
}

/** Exact F1/F2 using the grid: rings of cells are added until no unsearched seed can be closer. */
function nearestTwo(subject: NoseSubject, x: number, y: number, out: NearestPair): void {
  const { grid, plaques } = subject;
  const fx = (x - grid.originX) / grid.cellSize;
  const fy = (y - grid.originY) / grid.cellSize;
  const ci = Math.floor(fx);
  const cj = Math.floor(fy);
  let b1 = Infinity;
  let b2 = Infinity;
  let i1 = -1;
  let i2 = -1;
  const maxRing = Math.max(grid.cols, grid.rows);
  for (let ring = 0; ring <= maxRing; ring++) {
    for (let j = cj - ring; j <= cj + ring; j++) {
      if (j < 0 || j >= grid.rows) continue;
      const edgeRow = j === cj - ring || j === cj + ring;
      for (let i = ci - ring; i <= ci + ring; i += edgeRow ? 1 : 2 * ring || 1) {
        if (i < 0 || i >= grid.cols) continue;
        const c = j * grid.cols + i;
        for (let t = grid.cellStart[c]!; t < grid.cellStart[c + 1]!; t++) {
          const k = grid.items[t]!;
          const dx = x - plaques.x[k]!;
          const dy = y - plaques.y[k]!;
          const d = dx * dx + dy * dy;
          if (d < b1) {
            b2 = b1;
            i2 = i1;
            b1 = d;
            i1 = k;
          } else if (d < b2) {
            b2 = d;
            i2 = k;
          }
        }
      }
    }
    // Distance from the point to the outside of the searched block bounds any unseen seed.
    const margin = Math.min(fx - (ci - ring), ci + ring + 1 - fx, fy - (cj - ring), cj + ring + 1 - fy);
    const safe = margin * grid.cellSize;
    if (i2 >= 0 && b2 <= safe * safe) break;
  }
  out.first = i1;
  out.second = i2;
  out.d1 = Math.sqrt(b1);
  out.d2 = Math.sqrt(b2);
}

// ---------------------------------------------------------------------------------------------
// Surface evaluation

/** Low-frequency pigment/shape fields that do not need per-texel evaluation. */
interface SlowFields {
  padMask: number;
  pink: number;
  mottle: number;
  fur: number;
}

function evaluateSlowFields(subject: NoseSubject, x: number, y: number, out: SlowFields): void {
  const q = padShapeValue(subject.pad, x, y);
  out.padMask = 1 - smoothstep(1 - SURFACE.padEdgeSoftness * 2, 1 + SURFACE.padEdgeSoftness, q);
  const pg = subject.pigment;
  out.mottle = SURFACE.mottleAmplitude * fractalNoise(pg.noiseSeed ^ 0x3c3c, x * 2.2, y * 2.2, 2);
  if (pg.pinkAmount > 0) {
    const n = fractalNoise(pg.noiseSeed, x * pg.pinkScale, y * pg.pinkScale, 3) + 0.5;
    out.pink = pg.pinkAmount * smoothstep(pg.pinkThreshold + 0.25, pg.pinkThreshold + 0.33, n);
  } else {
    out.pink = 0;
  }
  // Fur: stretched noise gives a directional hair grain. It fades to its mean toward the map
  // border so that the flat background beyond the map joins without a seam.
  const edge = smoothstep(SURFACE.mapExtent, SURFACE.mapExtent - SURFACE.furFade, Math.max(Math.abs(x), Math.abs(y)));
  out.fur = 1 + edge * 0.5 * (valueNoise(pg.noiseSeed ^ 0x77, x * 9, y * 40) - 0.5);
}

/** Philtrum groove strength in [0, 1]. */
function philtrumGroove(p: Philtrum, x: number, y: number): number {
  if (y < p.top) return 0;
  const along = Math.min(1, (y - p.top) / 0.9);
  const width = p.widthTop + (p.widthBottom - p.widthTop) * along;
  const dx = x - philtrumCenterX(p, y);
  if (Math.abs(dx) > 3 * width) return 0;
  const fadeIn = smoothstep(p.top, p.top + 0.12, y);
  return fadeIn * Math.exp(-(dx * dx) / (width * width));
}

/** Nostril opening strength in [0, 1]: outer ellipse minus the alar fold = crescent/comma. */
function nostrilOpening(n: Nostril, x: number, y: number): number {
  const dx = x - n.centerX;
  const dy = y - n.centerY;
  if (Math.abs(dx) > n.radiusX * 1.5 && Math.abs(dy) > n.radiusY * 1.5) return 0;
  const c = Math.cos(n.tilt);
  const s = Math.sin(n.tilt);
  const lx = c * dx + s * dy;
  const ly = -s * dx + c * dy;
  const outer = Math.sqrt((lx / n.radiusX) ** 2 + (ly / n.radiusY) ** 2);
  if (outer > 1.15) return 0;
  const ax = (lx - n.alarOffsetX) / (n.radiusX * n.alarScale);
  const ay = (ly - n.alarOffsetY) / (n.radiusY * n.alarScale);
  const alar = Math.sqrt(ax * ax + ay * ay);
  return smoothstep(1.06, 0.9, outer) * smoothstep(0.94, 1.1, alar);
}

function composeSample(
  subject: NoseSubject,
  x: number,
  y: number,
  slow: SlowFields,
  near: NearestPair | null,
  out: SurfaceSample,
): void {
  const pg = subject.pigment;
  let height = 0;
  let shade = 1;
  let plaque = -1;
  if (near && slow.padMask > 0) {
    const { plaques } = subject;
    const k = near.first;
    const sx = plaques.x[near.second]! - plaques.x[k]!;
    const sy = plaques.y[near.second]! - plaques.y[k]!;
    // Distance to the bisector of the two nearest seeds = distance to the bead's polygon edge.
    const edge = (near.d2 * near.d2 - near.d1 * near.d1) / (2 * Math.sqrt(sx * sx + sy * sy));
    height = plaqueHeight(plaques, k, edge, near.d1);
    const cavity = plaqueCavity(plaques, k, edge);
    shade = cavity * plaques.brightness[k]!;
    plaque = cavity > SURFACE.glossyCavity ? k : -1;
  }
  const groove = philtrumGroove(subject.philtrum, x, y);
  if (groove > 0) {
    height = height * (1 - groove) - SURFACE.philtrumDepth * groove;
    shade *= 1 - 0.55 * groove;
  }
  const opening = Math.max(nostrilOpening(subject.nostrils[0], x, y), nostrilOpening(subject.nostrils[1], x, y));
  if (opening > 0) {
    height = height * (1 - opening) - 0.08 * opening;
    if (opening > 0.5) plaque = -1;
  }
  const pigmentScale = shade * (1 + slow.mottle);
  const pink = slow.pink;
  let r = (pg.dark[0] + (pg.pink[0] - pg.dark[0]) * pink) * pigmentScale;
  let g = (pg.dark[1] + (pg.pink[1] - pg.dark[1]) * pink) * pigmentScale;
  let b = (pg.dark[2] + (pg.pink[2] - pg.dark[2]) * pink) * pigmentScale;
  const hole = PIGMENT.nostrilAlbedo;
  r += (hole - r) * opening;
  g += (hole - g) * opening;
  b += (hole - b) * opening;
  const m = slow.padMask;
  out.r = pg.fur[0] * slow.fur + (r - pg.fur[0] * slow.fur) * m;
  out.g = pg.fur[1] * slow.fur + (g - pg.fur[1] * slow.fur) * m;
  out.b = pg.fur[2] * slow.fur + (b - pg.fur[2] * slow.fur) * m;
  out.height = height * m;
  out.plaque = m > 0.5 ? plaque : -1;
}

/** Evaluates the surface at one continuous nose coordinate (reference path, used by tests/tools). */
export function evaluateSurface(subject: NoseSubject, x: number, y: number): SurfaceSample {
  const slow: SlowFields = { padMask: 0, pink: 0, mottle: 0, fur: 0 };
  evaluateSlowFields(subject, x, y, slow);
  const near: NearestPair = { first: -1, second: -1, d1: 0, d2: 0 };
  if (slow.padMask > 0) nearestTwo(subject, x, y, near);
  const out: SurfaceSample = { height: 0, r: 0, g: 0, b: 0, plaque: -1 };
  composeSample(subject, x, y, slow, slow.padMask > 0 ? near : null, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Surface map: the surface rasterised once per subject so that each capture costs one bilinear
// fetch per sample instead of a Voronoi query (8 captures share one map).

export const SURFACE_MAP_CHANNELS = 5; // r, g, b albedo; height gradient x, y

export interface SurfaceMap {
  resolution: number;
  extent: number;
  /** Texels per nose unit. */
  scale: number;
  /** Interleaved r, g, b, dh/dx, dh/dy. */
  data: Float32Array;
  plaqueIds: Int32Array;
}

const mapCache = new WeakMap<NoseSubject, Map<number, SurfaceMap>>();

export function getSurfaceMap(subject: NoseSubject, resolution: number): SurfaceMap {
  let perSubject = mapCache.get(subject);
  if (!perSubject) {
    perSubject = new Map();
    mapCache.set(subject, perSubject);
  }
  let map = perSubject.get(resolution);
  if (!map) {
    // Coarser levels are box-filtered from the finest one already built (a mip chain), which
    // is far cheaper than evaluating the surface again and pre-filters the grooves.
    const finer = [...perSubject.values()].find((m) => m.resolution === resolution * 2);
    map = finer ? downsampleSurfaceMap(finer) : buildSurfaceMap(subject, resolution);
    perSubject.set(resolution, map);
  }
  return map;
}

export function downsampleSurfaceMap(fine: SurfaceMap): SurfaceMap {
  const resolution = fine.resolution / 2;
  const C = SURFACE_MAP_CHANNELS;
  const data = new Float32Array(resolution * resolution * C);
  const plaqueIds = new Int32Array(resolution * resolution);
  const fr = fine.resolution;
  for (let y = 0; y < resolution; y++) {
    for (let x = 0; x < resolution; x++) {
      const a = (2 * y * fr + 2 * x) * C;
      const b = a + C;
      const c = a + fr * C;
      const d = c + C;
      const o = (y * resolution + x) * C;
      for (let ch = 0; ch < C; ch++) {
        data[o + ch] = 0.25 * (fine.data[a + ch]! + fine.data[b + ch]! + fine.data[c + ch]! + fine.data[d + ch]!);
      }
      plaqueIds[y * resolution + x] = fine.plaqueIds[2 * y * fr + 2 * x]!;
    }
  }
  return { resolution, extent: fine.extent, scale: fine.scale / 2, data, plaqueIds };
}

/**
 * Reused temporaries of the map build (Voronoi distances, heights, masks): several MB per
 * subject that would otherwise be garbage after every subject. Single-threaded use only.
 */
const scratch = {
  floatBuffers: new Map<string, Float32Array>(),
  intBuffers: new Map<string, Int32Array>(),
  floats(slot: string, size: number, fill: number): Float32Array {
    let buffer = this.floatBuffers.get(slot);
    if (!buffer || buffer.length < size) this.floatBuffers.set(slot, (buffer = new Float32Array(size)));
    return buffer.subarray(0, size).fill(fill);
  },
  ints(slot: string, size: number, fill: number): Int32Array {
    let buffer = this.intBuffers.get(slot);
    if (!buffer || buffer.length < size) this.intBuffers.set(slot, (buffer = new Int32Array(size)));
    return buffer.subarray(0, size).fill(fill);
  },
};

export function buildSurfaceMap(subject: NoseSubject, resolution: number): SurfaceMap {
  const extent = SURFACE.mapExtent;
  const texel = (2 * extent) / resolution;
  const size = resolution * resolution;
  const voronoi = splatVoronoi(subject, resolution, texel, extent);
  const opening = scratch.floats("opening", size, 0);
  for (const nostril of subject.nostrils) rasterNostril(nostril, opening, resolution, texel, extent);
  const groove = scratch.floats("groove", size, 0);
  rasterPhiltrum(subject.philtrum, groove, resolution, texel, extent);
  const slowGrid = sampleSlowGrid(subject, resolution, texel, extent);

  const heights = scratch.floats("heights", size, 0);
  const data = new Float32Array(size * SURFACE_MAP_CHANNELS);
  const plaqueIds = new Int32Array(size);
  const { plaques, pigment: pg } = subject;
  const slow = new Float64Array(4);
  const hole = PIGMENT.nostrilAlbedo;
  for (let ty = 0; ty < resolution; ty++) {
    for (let tx = 0; tx < resolution; tx++) {
      const t = ty * resolution + tx;
      interpolateSlowFields(slowGrid, tx, ty, slow);
      const m = slow[0]!;
      let height = 0;
      let shade = 1;
      let plaque = -1;
      const k1 = voronoi.first[t]!;
      const k2 = voronoi.second[t]!;
      if (m > 0 && k2 >= 0) {
        const sx = plaques.x[k2]! - plaques.x[k1]!;
        const sy = plaques.y[k2]! - plaques.y[k1]!;
        const d1 = voronoi.d1[t]!;
        const d2 = voronoi.d2[t]!;
        const edge = (d2 - d1) / (2 * Math.sqrt(sx * sx + sy * sy)); // d1, d2 are squared here
        height = plaqueHeight(plaques, k1, edge, Math.sqrt(d1));
        const cavity = plaqueCavity(plaques, k1, edge);
        shade = cavity * plaques.brightness[k1]!;
        // Groove texels carry no bead id, so they never glint (capture.ts skips id −1).
        plaque = cavity > SURFACE.glossyCavity ? k1 : -1;
      }
      const g = groove[t]!;
      if (g > 0) {
        height = height * (1 - g) - SURFACE.philtrumDepth * g;
        shade *= 1 - 0.55 * g;
      }
      const o = opening[t]!;
      if (o > 0) {
        height = height * (1 - o) - 0.08 * o;
        if (o > 0.5) plaque = -1;
      }
      const pigmentScale = shade * (1 + slow[2]!);
      const pink = slow[1]!;
      const fur = slow[3]!;
      let r = (pg.dark[0] + (pg.pink[0] - pg.dark[0]) * pink) * pigmentScale;
      let gg = (pg.dark[1] + (pg.pink[1] - pg.dark[1]) * pink) * pigmentScale;
      let b = (pg.dark[2] + (pg.pink[2] - pg.dark[2]) * pink) * pigmentScale;
      r += (hole - r) * o;
      gg += (hole - gg) * o;
      b += (hole - b) * o;
      const c = t * SURFACE_MAP_CHANNELS;
      data[c] = pg.fur[0] * fur + (r - pg.fur[0] * fur) * m;
      data[c + 1] = pg.fur[1] * fur + (gg - pg.fur[1] * fur) * m;
      data[c + 2] = pg.fur[2] * fur + (b - pg.fur[2] * fur) * m;
      heights[t] = height * m;
      plaqueIds[t] = m > 0.5 ? plaque : -1;
    }
  }
  storeGradients(heights, data, resolution, texel);
  return { resolution, extent, scale: 1 / texel, data, plaqueIds };
}

interface VoronoiRaster {
  first: Int32Array;
  second: Int32Array;
  /** Squared distances to the nearest and second-nearest seed. */
  d1: Float32Array;
  d2: Float32Array;
}

/**
 * F1/F2 for every texel by splatting each seed into a disc of ~1.3× its spacing. Far cheaper
 * than a grid query per texel; a bead's second neighbour is always within that reach because
 * the Poisson packing leaves no holes larger than the local spacing.
 */
function splatVoronoi(subject: NoseSubject, resolution: number, texel: number, extent: number): VoronoiRaster {
  const size = resolution * resolution;
  const first = scratch.ints("first", size, -1);
  const second = scratch.ints("second", size, -1);
  const d1 = scratch.floats("d1", size, Infinity);
  const d2 = scratch.floats("d2", size, Infinity);
  const { plaques } = subject;
  for (let k = 0; k < plaques.count; k++) {
    const px = plaques.x[k]!;
    const py = plaques.y[k]!;
    const reach = plaques.spacing[k]! * SURFACE.splatReach;
    const reach2 = reach * reach;
    const x0 = Math.max(0, Math.floor((px - reach + extent) / texel));
    const x1 = Math.min(resolution - 1, Math.ceil((px + reach + extent) / texel));
    const y0 = Math.max(0, Math.floor((py - reach + extent) / texel));
    const y1 = Math.min(resolution - 1, Math.ceil((py + reach + extent) / texel));
    for (let ty = y0; ty <= y1; ty++) {
      const dy = -extent + (ty + 0.5) * texel - py;
      const dy2 = dy * dy;
      if (dy2 > reach2) continue;
      const row = ty * resolution;
      for (let tx = x0; tx <= x1; tx++) {
        const dx = -extent + (tx + 0.5) * texel - px;
        const d = dx * dx + dy2;
        if (d > reach2) continue;
        const t = row + tx;
        if (d < d1[t]!) {
          d2[t] = d1[t]!;
          second[t] = first[t]!;
          d1[t] = d;
          first[t] = k;
        } else if (d < d2[t]!) {
          d2[t] = d;
          second[t] = k;
        }
      }
    }
  }
  return { first, second, d1, d2 };
}

/** Bead height from the distance to its polygon edge (shoulder) and to its seed (dome). */
function plaqueHeight(plaques: PlaqueField, k: number, edge: number, d1: number): number {
  const spacing = plaques.spacing[k]!;
  const groove = SURFACE.grooveFraction * spacing + SURFACE.grooveMin;
  // V-shaped groove (no flat floor): a flat floor facing the camera would glint like a bead top.
  const t = Math.min(1, Math.max(0, edge / (groove + SURFACE.shoulderFraction * spacing)));
  const r = d1 / (0.6 * spacing);
  const dome = Math.max(0, 1 - 0.7 * r * r);
  return SURFACE.reliefFraction * spacing * plaques.height[k]! * t * (2 - t) * dome;
}

/** Albedo multiplier: grooves are shadowed crevices. */
function plaqueCavity(plaques: PlaqueField, k: number, edge: number): number {
  const groove = SURFACE.grooveFraction * plaques.spacing[k]! + SURFACE.grooveMin;
  return SURFACE.grooveDarkness + (1 - SURFACE.grooveDarkness) * smoothstep(0, groove * 2.2, edge);
}

function rasterNostril(n: Nostril, out: Float32Array, resolution: number, texel: number, extent: number): void {
  const r = 1.2 * Math.max(n.radiusX, n.radiusY);
  const x0 = Math.max(0, Math.floor((n.centerX - r + extent) / texel));
  const x1 = Math.min(resolution - 1, Math.ceil((n.centerX + r + extent) / texel));
  const y0 = Math.max(0, Math.floor((n.centerY - r + extent) / texel));
  const y1 = Math.min(resolution - 1, Math.ceil((n.centerY + r + extent) / texel));
  for (let ty = y0; ty <= y1; ty++) {
    const y = -extent + (ty + 0.5) * texel;
    for (let tx = x0; tx <= x1; tx++) {
      const v = nostrilOpening(n, -extent + (tx + 0.5) * texel, y);
      const t = ty * resolution + tx;
      if (v > out[t]!) out[t] = v;
    }
  }
}

function rasterPhiltrum(p: Philtrum, out: Float32Array, resolution: number, texel: number, extent: number): void {
  const y0 = Math.max(0, Math.floor((p.top + extent) / texel));
  const band = 3 * p.widthBottom + Math.abs(p.bend) * 4 + 0.05;
  for (let ty = y0; ty < resolution; ty++) {
    const y = -extent + (ty + 0.5) * texel;
    const cx = p.x;
    const x0 = Math.max(0, Math.floor((cx - band + extent) / texel));
    const x1 = Math.min(resolution - 1, Math.ceil((cx + band + extent) / texel));
    for (let tx = x0; tx <= x1; tx++) out[ty * resolution + tx] = philtrumGroove(p, -extent + (tx + 0.5) * texel, y);
  }
}

interface SlowGrid {
  step: number;
  cols: number;
  values: Float32Array; // padMask, pink, mottle, fur per node
}

function sampleSlowGrid(subject: NoseSubject, resolution: number, texel: number, extent: number): SlowGrid {
  const step = SURFACE.pigmentGridStep;
  const cols = Math.ceil(resolution / step) + 2;
  const values = new Float32Array(cols * cols * 4);
  const slow: SlowFields = { padMask: 0, pink: 0, mottle: 0, fur: 0 };
  for (let j = 0; j < cols; j++) {
    for (let i = 0; i < cols; i++) {
      evaluateSlowFields(subject, -extent + i * step * texel, -extent + j * step * texel, slow);
      const o = (j * cols + i) * 4;
      values[o] = slow.padMask;
      values[o + 1] = slow.pink;
      values[o + 2] = slow.mottle;
      values[o + 3] = slow.fur;
    }
  }
  return { step, cols, values };
}

/** Bilinear lookup of the slow grid into out = [padMask, pink, mottle, fur] (typed: no boxing). */
function interpolateSlowFields(grid: SlowGrid, tx: number, ty: number, out: Float64Array): void {
  const fx = (tx + 0.5) / grid.step;
  const fy = (ty + 0.5) / grid.step;
  const i = Math.floor(fx);
  const j = Math.floor(fy);
  const u = fx - i;
  const v = fy - j;
  const v00 = (j * grid.cols + i) * 4;
  const v10 = v00 + 4;
  const v01 = v00 + grid.cols * 4;
  const v11 = v01 + 4;
  const w = grid.values;
  const a = (1 - u) * (1 - v);
  const b = u * (1 - v);
  const c = (1 - u) * v;
  const d = u * v;
  for (let ch = 0; ch < 4; ch++) out[ch] = w[v00 + ch]! * a + w[v10 + ch]! * b + w[v01 + ch]! * c + w[v11 + ch]! * d;
  // Per-texel hash grain makes the fur look hairy rather than smooth (skipped where pad covers it).
  if (out[0]! < 1) {
    const grain = (finalizeHash(Math.imul(tx, 73856093) ^ Math.imul(ty, 19349663)) / 4294967296 - 0.5) * 0.35;
    out[3] = 1 + (out[3]! - 1) * (1 + grain * 2.5);
  }
}

function storeGradients(heights: Float32Array, data: Float32Array, resolution: number, texel: number): void {
  const inv = 1 / (2 * texel);
  for (let y = 0; y < resolution; y++) {
    const up = Math.max(0, y - 1) * resolution;
    const down = Math.min(resolution - 1, y + 1) * resolution;
    for (let x = 0; x < resolution; x++) {
      const left = Math.max(0, x - 1);
      const right = Math.min(resolution - 1, x + 1);
      const t = y * resolution + x;
      data[t * SURFACE_MAP_CHANNELS + 3] = (heights[y * resolution + right]! - heights[y * resolution + left]!) * inv;
      data[t * SURFACE_MAP_CHANNELS + 4] = (heights[down + x]! - heights[up + x]!) * inv;
    }
  }
}
