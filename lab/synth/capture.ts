// One photograph of a subject's nose: a random camera pose, soft-tissue deformation, lighting
// and camera degradations applied to the subject's stable surface, encoded as JPEG.
import sharp from "sharp";
import { type BackdropKind, type TileTexture, planBackdrop, sampleTile } from "./backdrop";
import { castDomeRay, createDomeCamera, DOME_MAP_CHANNELS, type DomeCamera, drawDomeShape, drawDomeView } from "./dome-camera";
import { furTexture } from "./fur";
import { getSurfaceMap, type NoseSubject, type PadOutline, padShapeValue, type SurfaceMap, SURFACE_MAP_CHANNELS } from "./nose-surface";
import {
  BURST_JITTER,
  DIFFICULTY,
  FUR,
  LIGHTING,
  REAL,
  REAL_LIGHTING,
  RENDER,
  SURFACE,
  type DifficultyName,
  type DifficultySettings,
  type EffectSettings,
} from "./parameters";
import {
  addBlobs,
  applyIllumination,
  type LightBlob,
  defocusBlur,
  type FloatImage,
  lineBlur,
  meteredLuminance,
  scratchFloats,
  toEightBit,
} from "./post-process";
import { Rng, finalizeHash, hashSeed } from "./prng";

export interface CaptureOptions {
  difficulty: DifficultyName;
  /**
   * Burst membership (hard mode): frames with the same burst seed share pose, lighting and
   * deformation up to small per-frame jitter. Omit for an independent photo.
   */
  burst?: { seed: number; frame: number };
  /**
   * "real" only: what lies behind the nose (plain when omitted). `setSeed` picks the pattern of a
   * shared backdrop, the same in every capture of a set.
   */
  backdrop?: { kind: BackdropKind; setSeed: number };
  /** "real" only: how closely the crop frames the pad (tight when omitted; REAL.fill / REAL.looseFill). */
  framing?: Framing;
  /** "real" only: the roll of each capture's pose (`upright`, mostly within ± 30°, when omitted; REAL.rollSigmaDeg). */
  roll?: Roll;
}

/** How closely a "real" crop frames the pad: `tight` as detector crops, `loose` with the scene around the muzzle. */
export const FRAMINGS = ["tight", "loose"] as const;
export type Framing = (typeof FRAMINGS)[number];

/**
 * How a "real" capture is turned in the image plane: `upright` as most phone photos (normal, σ REAL.rollSigmaDeg,
 * clamped at REAL.rollMaxDeg), `any` uniform over the whole turn (a dog lying on its side, a phone held sideways with
 * its orientation locked). Both come from the same draw, so a set made with `any` differs from its upright twin only
 * in roll.
 */
export const ROLLS = ["upright", "any"] as const;
export type Roll = (typeof ROLLS)[number];

/** The roll in degrees of the standard normal draw `z`: clamped normal, or uniform in [-180, 180) through z's CDF. */
export function rollDegrees(z: number, roll: Roll = "upright"): number {
  if (roll === "any") return 360 * normalCdf(z) - 180;
  return Math.max(-REAL.rollMaxDeg, Math.min(REAL.rollMaxDeg, z * REAL.rollSigmaDeg));
}

/** The standard normal CDF (Abramowitz and Stegun 7.1.26: absolute error under 1.5e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

export interface CaptureResult {
  jpeg: Buffer;
  width: number;
  height: number;
}

interface WarpWave {
  amplitude: number;
  freqX: number;
  freqY: number;
  phase: number;
}

/** Everything random about one capture, drawn up front so rendering is a pure function of it. */
export interface CapturePlan {
  width: number;
  height: number;
  supersample: number;
  mapResolution: number;
  // Pose: image px → nose units.
  pixelsPerUnit: number;
  rotation: number;
  shiftX: number;
  shiftY: number;
  keystoneX: number;
  keystoneY: number;
  yaw: number;
  pitch: number;
  curvatureX: number;
  curvatureY: number;
  warpX: WarpWave[];
  warpY: WarpWave[];
  // Lighting (light direction given in the image frame).
  lightAzimuth: number;
  lightElevation: number;
  ambient: number;
  lightColor: [number, number, number];
  background: [number, number, number];
  bump: number;
  specular: number;
  shininessLog2: number;
  wetFraction: number;
  wetSalt: number;
  gradient: { dirX: number; dirY: number; strength: number };
  vignette: number;
  exposureTarget: number;
  gamma: number;
  /** "real" only: the phone's S-shaped tone curve (see SensorModel). */
  toneContrast?: number;
  // Degradations.
  droplets: LightBlob[];
  glare: LightBlob[];
  defocusSigma: number;
  motionLength: number;
  motionAngle: number;
  noiseFloor: number;
  noiseShot: number;
  noiseSeed: number;
  jpegQuality: number;
  /** "real" only: the perspective dome camera (replaces the affine pose above) and the backdrop. */
  camera?: DomeCamera;
  backdrop?: TileTexture;
  /** "real" only: the subject's hair, laid over everything outside the pad's outline. */
  fur?: { texture: TileTexture; pad: PadOutline };
}

export async function renderCapture(
  subject: NoseSubject,
  captureSeed: number,
  options: CaptureOptions,
): Promise<CaptureResult> {
  const plan = planCapture(subject, captureSeed, options);
  const image = renderLinear(selectMapLevel(subject, plan), plan);
  const pixels = developImage(image, plan);
  const jpeg = await sharp(pixels, { raw: { width: plan.width, height: plan.height, channels: 3 } })
    .jpeg({ quality: plan.jpegQuality, mozjpeg: false, chromaSubsampling: "4:2:0" })
    .toBuffer();
  return { jpeg, width: plan.width, height: plan.height };
}

// ---------------------------------------------------------------------------------------------
// Planning

export function planCapture(subject: NoseSubject, captureSeed: number, options: CaptureOptions): CapturePlan {
  if (options.difficulty === "real") return planRealCapture(subject, captureSeed, options);
  const settings = DIFFICULTY[options.difficulty];
  const frame = new Rng(hashSeed(captureSeed, 0xf4a3e));
  // Shared (burst) draws come from the burst seed; an independent photo is a burst of one.
  const shared = new Rng(hashSeed(options.burst?.seed ?? captureSeed, 0xb0257));
  const jitter = options.burst ? 1 : 0;
  const anatomy = new Rng(hashSeed(subject.seed, 0xc0a7));

  const size = planFrameSize(settings, shared, frame, jitter);
  const pose = planPose(settings, shared, frame, jitter, size);
  const warp = planWarp(settings, shared, frame, jitter);
  const light = planLighting(subject, shared, frame, jitter);
  const effects = planEffects(settings, frame, size, pose);
  return {
    ...size,
    supersample: settings.supersample,
    mapResolution: settings.mapResolution,
    ...pose,
    curvatureX: anatomy.between(RENDER.curvatureX),
    curvatureY: anatomy.between(RENDER.curvatureY),
    ...warp,
    ...light,
    ...effects,
  };
}

function planFrameSize(settings: DifficultySettings, shared: Rng, frame: Rng, jitter: number) {
  const [lo, hi] = settings.longestSide;
  const base = shared.between(settings.longestSide);
  const longest = Math.round(Math.min(hi, Math.max(lo, base * (1 + jitter * frame.symmetric(BURST_JITTER.size)))));
  const aspect = shared.between(settings.aspect);
  const shortest = Math.max(16, Math.round(longest * aspect));
  const landscape = shared.chance(0.5);
  return { width: landscape ? longest : shortest, height: landscape ? shortest : longest };
}

function planPose(
  settings: DifficultySettings,
  shared: Rng,
  frame: Rng,
  jitter: number,
  size: { width: number; height: number },
) {
  const deg = Math.PI / 180;
  const fill = shared.between(settings.fill);
  const scale = shared.between(settings.scale) * (1 + jitter * frame.symmetric(BURST_JITTER.scale));
  const rotation = (shared.symmetric(settings.rotationDeg) + jitter * frame.symmetric(BURST_JITTER.rotationDeg)) * deg;
  const t = settings.translation;
  const tj = BURST_JITTER.translation * jitter;
  return {
    pixelsPerUnit: (fill * scale * Math.min(size.width, size.height)) / 2,
    rotation,
    shiftX: (shared.symmetric(t) + frame.symmetric(tj)) * size.width,
    shiftY: (shared.symmetric(t) + frame.symmetric(tj)) * size.height,
    keystoneX: shared.symmetric(settings.keystone),
    keystoneY: shared.symmetric(settings.keystone),
    yaw: shared.symmetric(settings.yaw) + jitter * frame.symmetric(BURST_JITTER.yaw),
    pitch: shared.symmetric(settings.pitch) + jitter * frame.symmetric(BURST_JITTER.pitch),
  };
}

function drawWaves(rng: Rng, amplitude: number): WarpWave[] {
  const waves: WarpWave[] = [];
  for (let i = 0; i < RENDER.warpComponents; i++) {
    const wavelength = rng.between(RENDER.warpWavelength);
    const angle = rng.next() * 2 * Math.PI;
    const f = (2 * Math.PI) / wavelength;
    waves.push({
      amplitude: (amplitude / RENDER.warpComponents) * rng.range(0.5, 1.5),
      freqX: f * Math.cos(angle),
      freqY: f * Math.sin(angle),
      phase: rng.next() * 2 * Math.PI,
    });
  }
  return waves;
}

function planWarp(settings: Pick<DifficultySettings, "warpAmplitude">, shared: Rng, frame: Rng, jitter: number) {
  const amplitude = shared.between(settings.warpAmplitude);
  const blend = jitter * BURST_JITTER.warpBlend;
  // Burst frames keep most of the shared deformation and add a small fresh component.
  const scaled = (waves: WarpWave[], k: number) => waves.map((w) => ({ ...w, amplitude: w.amplitude * k }));
  const sharedX = drawWaves(shared, amplitude);
  const sharedY = drawWaves(shared, amplitude);
  const frameX = drawWaves(frame, amplitude);
  const frameY = drawWaves(frame, amplitude);
  return {
    warpX: blend > 0 ? [...scaled(sharedX, 1 - blend), ...scaled(frameX, blend)] : sharedX,
    warpY: blend > 0 ? [...scaled(sharedY, 1 - blend), ...scaled(frameY, blend)] : sharedY,
  };
}

function planLighting(subject: NoseSubject, shared: Rng, frame: Rng, jitter: number) {
  const wb = () => 1 + shared.symmetric(LIGHTING.whiteBalance);
  // Beyond the pad the camera sees more of the muzzle: the subject's fur, dimmer (in shadow).
  const fur = subject.pigment.fur;

  const gradientAngle = shared.next() * 2 * Math.PI;
  return {
    lightAzimuth: shared.next() * 2 * Math.PI + jitter * frame.symmetric(BURST_JITTER.lightAzimuthDeg) * (Math.PI / 180),
    lightElevation: shared.between(LIGHTING.elevation),
    ambient: shared.between(LIGHTING.ambient),
    lightColor: [wb(), wb(), wb()] as [number, number, number],
    background: [fur[0], fur[1], fur[2]] as [number, number, number],
    bump: shared.between(LIGHTING.bump),
    specular: shared.between(LIGHTING.specular),
    shininessLog2: shared.int(LIGHTING.shininessLog2[0], LIGHTING.shininessLog2[1]),
    wetFraction: shared.between(LIGHTING.wetFraction),
    // Moisture moves between photos but not within a burst.
    wetSalt: shared.nextUint32(),
    gradient: { dirX: Math.cos(gradientAngle), dirY: Math.sin(gradientAngle), strength: shared.between(LIGHTING.gradient) },
    vignette: shared.between(LIGHTING.vignette),
    exposureTarget: shared.between(LIGHTING.exposureTarget) * (1 + jitter * frame.symmetric(0.1)),
    gamma: 2.2 * shared.between(LIGHTING.gammaJitter),
  };
}

/** Blobs scattered around a centre (glints sit on the wet pad, not on the fur). */
function planBlobs(
  rng: Rng,
  count: number,
  size: { width: number; height: number },
  area: { x: number; y: number; radius: number },
  radius: readonly [number, number],
  strength: readonly [number, number],
): LightBlob[] {
  const short = Math.min(size.width, size.height);
  const blobs: LightBlob[] = [];
  for (let i = 0; i < count; i++) {
    const r = rng.between(radius) * short;
    const elongation = rng.range(0.6, 1.6);
    blobs.push({
      x: area.x + rng.symmetric(area.radius),
      y: area.y + rng.symmetric(area.radius),
      radiusX: Math.max(0.6, r * elongation),
      radiusY: Math.max(0.6, r / elongation),
      strength: rng.between(strength),
    });
  }
  return blobs;
}

function planEffects(
  settings: EffectSettings,
  frame: Rng,
  size: { width: number; height: number },
  pose: { shiftX: number; shiftY: number; pixelsPerUnit: number },
) {
  const pad = { x: size.width / 2 + pose.shiftX, y: size.height / 2 + pose.shiftY, radius: 0.75 * pose.pixelsPerUnit };
  const frameArea = { x: size.width / 2, y: size.height / 2, radius: 0.5 * Math.max(size.width, size.height) };
  const droplets = planBlobs(frame, frame.int(settings.droplets[0], settings.droplets[1]), size, pad, RENDER.dropletRadius, settings.dropletStrength);
  const glare = frame.chance(settings.glareProbability)
    ? planBlobs(frame, frame.int(1, 2), size, frameArea, RENDER.glareRadius, settings.glareStrength)
    : [];
  const defocusSigma = frame.chance(settings.defocusProbability) ? frame.between(settings.defocusSigma) : 0;
  const moving = frame.chance(settings.motionProbability);
  return {
    droplets,
    glare,
    defocusSigma,
    motionLength: moving ? frame.between(settings.motionLength) : 0,
    motionAngle: frame.next() * Math.PI,
    noiseFloor: frame.between(settings.noiseFloor),
    noiseShot: frame.between(settings.noiseShot),
    noiseSeed: frame.nextUint32(),
    jpegQuality: frame.int(settings.jpegQuality[0], settings.jpegQuality[1]),
  };
}

/**
 * A capture of the "real" setting: a square crop of a size drawn from real crops' distribution, a
 * perspective view of the dome from up to half of REAL.maxViewTurnDeg off its axis, real light
 * (flash along the view or room light from above), and a backdrop behind the muzzle.
 */
function planRealCapture(subject: NoseSubject, captureSeed: number, options: CaptureOptions): CapturePlan {
  const frame = new Rng(hashSeed(captureSeed, 0xf4a3e));
  const shared = new Rng(hashSeed(options.burst?.seed ?? captureSeed, 0xb0257));
  const jitter = options.burst ? 1 : 0;
  const anatomy = new Rng(hashSeed(subject.seed, 0xd03e));
  // The backdrop has its own stream, so the geometry of a capture does not depend on it; frames of
  // a burst share it.
  const backdropRng = new Rng(hashSeed(options.burst?.seed ?? captureSeed, 0xbac4));
  const deg = Math.PI / 180;

  const drawn = quantileOf(REAL.cropSizeQuantiles, shared.next()) * (1 + jitter * frame.symmetric(BURST_JITTER.size));
  const side = Math.max(REAL.cropSizeQuantiles[0][1], Math.round(drawn));
  const size = { width: side, height: side };
  const fill = shared.between(options.framing === "loose" ? REAL.looseFill : REAL.fill);
  const pixelsPerUnit = (fill * (1 + jitter * frame.symmetric(BURST_JITTER.scale)) * side) / 2;
  const roll = rollDegrees(shared.normal(), options.roll);
  const t = REAL.translation;
  const tj = BURST_JITTER.translation * jitter;
  const pose = {
    pixelsPerUnit,
    rotation: (roll + jitter * frame.symmetric(BURST_JITTER.rotationDeg)) * deg,
    shiftX: (shared.symmetric(t) + frame.symmetric(tj)) * side,
    shiftY: (shared.symmetric(t) + frame.symmetric(tj)) * side,
  };
  const view = drawDomeView(shared, frame, jitter, pixelsPerUnit);
  const backdrop = planBackdrop(options.backdrop?.kind ?? "plain", options.backdrop?.setSeed ?? 0, backdropRng);
  const camera = createDomeCamera(drawDomeShape(anatomy), view, backdrop);
  const warp = planWarp(REAL.effects, shared, frame, jitter);
  const light = planRealLighting(subject, shared, frame, jitter);
  const effects = planEffects(REAL.effects, frame, size, pose);
  return {
    ...size,
    supersample: 1,
    mapResolution: REAL.mapResolution,
    ...pose,
    keystoneX: 0,
    keystoneY: 0,
    yaw: 0,
    pitch: 0,
    curvatureX: camera.radiusX,
    curvatureY: camera.radiusY,
    ...warp,
    ...light,
    ...effects,
    camera,
    backdrop: backdrop.texture,
    fur: { texture: furTexture(subject.seed, options.burst?.seed ?? captureSeed), pad: subject.pad },
  };
}

/** Inverse of a piecewise-linear quantile function given as [level, value] points. */
function quantileOf(points: readonly (readonly [number, number])[], level: number): number {
  for (let i = 1; i < points.length; i++) {
    const [l1, v1] = points[i]!;
    if (level <= l1) {
      const [l0, v0] = points[i - 1]!;
      return v0 + ((v1 - v0) * (level - l0)) / Math.max(1e-12, l1 - l0);
    }
  }
  return points[points.length - 1]![1];
}

function planRealLighting(subject: NoseSubject, shared: Rng, frame: Rng, jitter: number) {
  const L = REAL_LIGHTING;
  const onAxis = shared.chance(L.onAxisProbability);
  // Image frame: azimuth −π/2 is "from above".
  const azimuth = onAxis ? shared.next() * 2 * Math.PI : -Math.PI / 2 + shared.symmetric(L.roomAzimuthSpread);
  const elevation = shared.between(onAxis ? L.onAxisElevation : L.roomElevation);
  const warmth = shared.between(L.warmth);
  const wb = () => 1 + shared.symmetric(LIGHTING.whiteBalance);
  const fur = subject.pigment.fur;
  const [lo, hi] = L.exposureTarget;
  const gradientAngle = shared.next() * 2 * Math.PI;
  const exposure = lo * Math.pow(hi / lo, shared.next());
  return {
    lightAzimuth: azimuth + jitter * frame.symmetric(BURST_JITTER.lightAzimuthDeg) * (Math.PI / 180),
    lightElevation: elevation,
    ambient: shared.between(L.ambient),
    lightColor: [wb() * (1 + warmth), wb(), wb() * (1 - 0.8 * warmth)] as [number, number, number],
    background: [fur[0], fur[1], fur[2]] as [number, number, number],
    bump: shared.between(L.bump),
    specular: shared.between(L.specular),
    shininessLog2: shared.int(L.shininessLog2[0], L.shininessLog2[1]),
    wetFraction: shared.between(L.wetFraction),
    wetSalt: shared.nextUint32(),
    gradient: { dirX: Math.cos(gradientAngle), dirY: Math.sin(gradientAngle), strength: shared.between(L.gradient) },
    vignette: 0,
    exposureTarget: exposure * (1 + jitter * frame.symmetric(0.1)),
    gamma: 2.2 * shared.between(LIGHTING.gammaJitter),
    toneContrast: shared.between(L.toneContrast),
  };
}

// ---------------------------------------------------------------------------------------------
// Geometry: inverse mapping from image pixels to nose coordinates

const MAP_CHANNELS = 5; // u, v, macro slope x, macro slope y, coverage (1 on the pad's visible side)

/**
 * Inverse camera model at one image point; writes [u, v, slopeX, slopeY, coverage] at out[o]
 * (the dome camera adds its channels, see castDomeRay).
 */
function inverseMap(plan: CapturePlan, px: number, py: number, out: Float32Array, o: number): void {
  if (plan.camera) {
    inverseDomeMap(plan, plan.camera, px, py, out, o);
    return;
  }
  const cos = Math.cos(plan.rotation);
  const sin = Math.sin(plan.rotation);
  const cx = px - plan.width / 2 - plan.shiftX;
  const cy = py - plan.height / 2 - plan.shiftY;
  const xr = (cos * cx + sin * cy) / plan.pixelsPerUnit;
  const yr = (-sin * cx + cos * cy) / plan.pixelsPerUnit;
  // Keystone: inverse of the projective division x' = x / (1 + kx·x + ky·y).
  const w = 1 / Math.max(0.2, 1 - plan.keystoneX * xr - plan.keystoneY * yr);
  const xp = xr * w;
  const yp = yr * w;
  // The pad is curved (barrel); yaw/pitch rotate it, foreshortening the side turning away.
  const ax = xp / plan.curvatureX + Math.sin(plan.yaw);
  const ay = yp / plan.curvatureY + Math.sin(plan.pitch);
  // Fades out toward the silhouette of the curved pad instead of ending at a hard edge.
  let coverage = Math.min(1, Math.max(0, (0.985 - Math.max(Math.abs(ax), Math.abs(ay))) / 0.1));
  const phiX = Math.asin(Math.max(-0.985, Math.min(0.985, ax)));
  const phiY = Math.asin(Math.max(-0.985, Math.min(0.985, ay)));
  let u = plan.curvatureX * (phiX - plan.yaw);
  let v = plan.curvatureY * (phiY - plan.pitch);
  // Soft-tissue deformation: low-frequency displacement of surface coordinates.
  let du = 0;
  let dv = 0;
  for (const wave of plan.warpX) du += wave.amplitude * Math.sin(wave.freqX * u + wave.freqY * v + wave.phase);
  for (const wave of plan.warpY) dv += wave.amplitude * Math.sin(wave.freqX * u + wave.freqY * v + wave.phase);
  u += du;
  v += dv;
  // Beyond the surface map there is only unstructured background (no clamped-edge streaks).
  const inside = SURFACE.mapExtent - Math.max(Math.abs(u), Math.abs(v));
  coverage *= Math.min(1, Math.max(0, inside / 0.3));
  out[o] = u;
  out[o + 1] = v;
  out[o + 2] = Math.tan(phiX);
  out[o + 3] = Math.tan(phiY);
  out[o + 4] = coverage;
}

function inverseDomeMap(plan: CapturePlan, camera: DomeCamera, px: number, py: number, out: Float32Array, o: number): void {
  const cos = Math.cos(plan.rotation);
  const sin = Math.sin(plan.rotation);
  const cx = px - plan.width / 2 - plan.shiftX;
  const cy = py - plan.height / 2 - plan.shiftY;
  castDomeRay(camera, cos * cx + sin * cy, -sin * cx + cos * cy, out, o);
  const u = out[o]!;
  const v = out[o + 1]!;
  let du = 0;
  let dv = 0;
  for (const wave of plan.warpX) du += wave.amplitude * Math.sin(wave.freqX * u + wave.freqY * v + wave.phase);
  for (const wave of plan.warpY) dv += wave.amplitude * Math.sin(wave.freqX * u + wave.freqY * v + wave.phase);
  out[o] = u + du;
  out[o + 1] = v + dv;
}

function mapChannels(plan: CapturePlan): number {
  return plan.camera ? DOME_MAP_CHANNELS : MAP_CHANNELS;
}

/**
 * The nose-surface point (u, v) that image point (px, py) of a capture shows, and its coverage (0 off
 * the pad): the generator's ground truth for which points of two captures are the same physical point.
 */
export function surfacePointOf(plan: CapturePlan, px: number, py: number): { u: number; v: number; coverage: number } {
  const out = new Float32Array(mapChannels(plan));
  inverseMap(plan, px, py, out, 0);
  return { u: out[0], v: out[1], coverage: out[4] };
}

/**
 * The fraction of a "real" capture's crop where the ray misses the dome and shows the backdrop (0 for the
 * affine settings, which have none), from an n × n grid of the crop's pixels.
 */
export function backdropFractionOf(plan: CapturePlan, n = 48): number {
  if (!plan.camera) return 0;
  const out = new Float32Array(DOME_MAP_CHANNELS);
  let backdrop = 0;
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < n; i++) {
      inverseMap(plan, ((i + 0.5) * plan.width) / n, ((j + 0.5) * plan.height) / n, out, 0);
      backdrop += 1 - out[5]!;
    }
  }
  return backdrop / (n * n);
}

interface MappingGrid {
  channels: number;
  step: number;
  cols: number;
  rows: number;
  values: Float32Array;
}

/** The mapping is smooth, so it is evaluated on a coarse grid and interpolated per sample. */
function buildMappingGrid(plan: CapturePlan): MappingGrid {
  const ss = plan.supersample;
  const step = RENDER.mapGridStep;
  const cols = Math.ceil((plan.width * ss) / step) + 1;
  const rows = Math.ceil((plan.height * ss) / step) + 1;
  const channels = mapChannels(plan);
  const values = new Float32Array(cols * rows * channels);
  for (let j = 0; j < rows; j++) {
    for (let i = 0; i < cols; i++) {
      inverseMap(plan, (i * step + 0.5) / ss, (j * step + 0.5) / ss, values, (j * cols + i) * channels);
    }
  }
  return { channels, step, cols, rows, values };
}

// ---------------------------------------------------------------------------------------------
// Rendering

/**
 * Picks the finest mip level whose texels are not much smaller than a sample: minifying a
 * bilinear fetch beyond ~1.5 texels per sample aliases the grooves.
 */
function selectMapLevel(subject: NoseSubject, plan: CapturePlan): SurfaceMap {
  let map = getSurfaceMap(subject, plan.mapResolution);
  const samplesPerUnit = plan.pixelsPerUnit * plan.supersample;
  while (map.scale / samplesPerUnit > RENDER.maxTexelsPerSample && map.resolution > 128) {
    map = getSurfaceMap(subject, map.resolution / 2);
  }
  return map;
}

/** Samples and shades the surface at supersampled positions, box-filtered into output pixels. */
function renderLinear(map: SurfaceMap, plan: CapturePlan): FloatImage {
  const { width, height, supersample: ss } = plan;
  const grid = buildMappingGrid(plan);
  const acc = scratchFloats("render", width * height * 3);
  const sampleWeight = 1 / (ss * ss);

  // Light and half-vector in the nose frame: rotate the image-frame azimuth by the pose roll.
  const az = plan.lightAzimuth - plan.rotation;
  const ce = Math.cos(plan.lightElevation);
  const lx = ce * Math.cos(az);
  const ly = ce * Math.sin(az);
  const lz = Math.sin(plan.lightElevation);
  const hNorm = 1 / Math.hypot(lx, ly, lz + 1);
  const hx = lx * hNorm;
  const hy = ly * hNorm;
  const hz = (lz + 1) * hNorm;
  const diffuseGain = 1 - plan.ambient;
  const wetThreshold = Math.floor(plan.wetFraction * 1024);
  const { data: tex, plaqueIds, resolution: res, scale: texScale, extent } = map;
  const maxCoord = res - 1.001;
  const [lr, lg, lb] = plan.lightColor;
  // Background is the same fur under the same light, so the frame has no seams.
  const [br, bgc, bb] = plan.background;
  // Hoisted: the plan has many fields, and property lookups in the sample loop are measurable.
  const bump = plan.bump;
  const specular = plan.specular;
  const shininessLog2 = plan.shininessLog2;
  const wetSalt = plan.wetSalt;
  const ambient = plan.ambient;
  const dryGloss = LIGHTING.dryGloss;
  const flankDrain = LIGHTING.flankDrain;
  const ndhMin = Math.pow(0.01, 1 / 2 ** shininessLog2);

  const channels = grid.channels;
  const rowValues = new Float32Array(grid.cols * channels);
  // Real captures: the backdrop plane, lit like a surface facing the nose axis.
  const backdrop = plan.backdrop;
  const backdropColour = new Float64Array(3);
  const hair = new Float64Array(3);
  const fur = plan.fur;
  let backdropLight = 0;
  if (plan.camera) {
    const c = plan.camera;
    const bx = c.right[2];
    const by = c.down[2];
    const bz = -c.forward[2];
    backdropLight = ambient + diffuseGain * Math.max(0, bx * lx + by * ly + bz * lz);
  }
  const sw = width * ss;
  const sh = height * ss;
  for (let sy = 0; sy < sh; sy++) {
    interpolateGridRow(grid, sy, rowValues);
    const outRow = ((sy / ss) | 0) * width;
    for (let sx = 0; sx < sw; sx++) {
      const gi = (sx / grid.step) | 0;
      const f = (sx - gi * grid.step) / grid.step;
      const a = gi * channels;
      const b = a + channels;
      const u = rowValues[a]! + (rowValues[b]! - rowValues[a]!) * f;
      const v = rowValues[a + 1]! + (rowValues[b + 1]! - rowValues[a + 1]!) * f;
      const mx = rowValues[a + 2]! + (rowValues[b + 2]! - rowValues[a + 2]!) * f;
      const my = rowValues[a + 3]! + (rowValues[b + 3]! - rowValues[a + 3]!) * f;
      const coverage = rowValues[a + 4]! + (rowValues[b + 4]! - rowValues[a + 4]!) * f;

      // Bilinear surface-map fetch.
      let tu = (u + extent) * texScale - 0.5;
      let tv = (v + extent) * texScale - 0.5;
      tu = tu < 0 ? 0 : tu > maxCoord ? maxCoord : tu;
      tv = tv < 0 ? 0 : tv > maxCoord ? maxCoord : tv;
      const iu = tu | 0;
      const iv = tv | 0;
      const fu = tu - iu;
      const fv = tv - iv;
      const t00 = (iv * res + iu) * SURFACE_MAP_CHANNELS;
      const t10 = t00 + SURFACE_MAP_CHANNELS;
      const t01 = t00 + res * SURFACE_MAP_CHANNELS;
      const t11 = t01 + SURFACE_MAP_CHANNELS;
      const w00 = (1 - fu) * (1 - fv);
      const w10 = fu * (1 - fv);
      const w01 = (1 - fu) * fv;
      const w11 = fu * fv;
      const ar = tex[t00]! * w00 + tex[t10]! * w10 + tex[t01]! * w01 + tex[t11]! * w11;
      const ag = tex[t00 + 1]! * w00 + tex[t10 + 1]! * w10 + tex[t01 + 1]! * w01 + tex[t11 + 1]! * w11;
      const ab = tex[t00 + 2]! * w00 + tex[t10 + 2]! * w10 + tex[t01 + 2]! * w01 + tex[t11 + 2]! * w11;
      const gx = tex[t00 + 3]! * w00 + tex[t10 + 3]! * w10 + tex[t01 + 3]! * w01 + tex[t11 + 3]! * w11;
      const gy = tex[t00 + 4]! * w00 + tex[t10 + 4]! * w10 + tex[t01 + 4]! * w01 + tex[t11 + 4]! * w11;

      // Shading: macro curvature + bead relief normal, Lambert + Blinn–Phong on wet beads.
      const nx = mx - gx * bump;
      const ny = my - gy * bump;
      const inv = 1 / Math.sqrt(nx * nx + ny * ny + 1);
      const ndl = (nx * lx + ny * ly + lz) * inv;
      const light = ambient + diffuseGain * (ndl > 0 ? ndl : 0);
      let spec = 0;
      let ndh = (nx * hx + ny * hy + hz) * inv;
      // Below ndhMin the glint is < 1% of its peak: skip the bead lookup and the power.
      if (ndh > ndhMin) {
        const plaque = plaqueIds[((tv + 0.5) | 0) * res + ((tu + 0.5) | 0)]!;
        if (plaque >= 0) {
          for (let k = 0; k < shininessLog2; k++) ndh *= ndh;
          const wet = (finalizeHash(plaque ^ wetSalt) & 1023) < wetThreshold ? 1 : dryGloss;
          spec = (specular * wet * ndh) / (1 + flankDrain * (gx * gx + gy * gy));
        }
      }
      const o = (outRow + ((sx / ss) | 0)) * 3;
      if (backdrop) {
        // Three layers: the mapped surface, fur on the rest of the dome, the backdrop beyond it.
        const dome = rowValues[a + 5]! + (rowValues[b + 5]! - rowValues[a + 5]!) * f;
        const cov = coverage * sampleWeight;
        const furLight = (dome - coverage) * sampleWeight * light;
        const backW = (1 - dome) * sampleWeight * backdropLight;
        if (backW > 0) {
          const px = rowValues[a + 6]! + (rowValues[b + 6]! - rowValues[a + 6]!) * f;
          const py = rowValues[a + 7]! + (rowValues[b + 7]! - rowValues[a + 7]!) * f;
          sampleTile(backdrop, px, py, backdropColour);
        }
        const backR = backW > 0 ? backW * backdropColour[0]! : 0;
        const backG = backW > 0 ? backW * backdropColour[1]! : 0;
        const backB = backW > 0 ? backW * backdropColour[2]! : 0;
        let hairFactor = 1;
        if (fur) {
          const q = padShapeValue(fur.pad, u, v);
          if (q > FUR.fadeIn[0]) {
            sampleTile(fur.texture, u, v, hair);
            const w = Math.min(1, (q - FUR.fadeIn[0]) / (FUR.fadeIn[1] - FUR.fadeIn[0]));
            hairFactor = 1 + w * (hair[0]! - 1);
          }
        }
        const surfLight = light * hairFactor;
        const furHair = furLight * hairFactor;
        acc[o] = acc[o]! + (cov * (ar * surfLight + spec) + furHair * br + backR) * lr;
        acc[o + 1] = acc[o + 1]! + (cov * (ag * surfLight + spec) + furHair * bgc + backG) * lg;
        acc[o + 2] = acc[o + 2]! + (cov * (ab * surfLight + spec) + furHair * bb + backB) * lb;
        continue;
      }
      const cov = coverage * sampleWeight;
      const bgw = (1 - coverage) * sampleWeight;
      const bgLight = bgw * light;
      acc[o] = acc[o]! + (cov * (ar * light + spec) + bgLight * br) * lr;
      acc[o + 1] = acc[o + 1]! + (cov * (ag * light + spec) + bgLight * bgc) * lg;
      acc[o + 2] = acc[o + 2]! + (cov * (ab * light + spec) + bgLight * bb) * lb;
    }
  }
  return { width, height, data: acc };
}

function interpolateGridRow(grid: MappingGrid, sy: number, out: Float32Array): void {
  const j = Math.min(grid.rows - 2, (sy / grid.step) | 0);
  const f = (sy - j * grid.step) / grid.step;
  const top = j * grid.cols * grid.channels;
  const bottom = top + grid.cols * grid.channels;
  const n = grid.cols * grid.channels;
  for (let i = 0; i < n; i++) out[i] = grid.values[top + i]! + (grid.values[bottom + i]! - grid.values[top + i]!) * f;
}

/** Camera pipeline: exposure, uneven light, glints, glare, optics blur, tone curve, noise. */
function developImage(image: FloatImage, plan: CapturePlan): Buffer {
  // A real crop is cut from a larger photo that the phone metered: the whole crop stands in for it.
  const metered = plan.camera ? meteredLuminance(image, 0) : meteredLuminance(image);
  const exposure = Math.min(40, plan.exposureTarget / Math.max(1e-4, metered));
  applyIllumination(image, exposure, plan.gradient, plan.vignette);
  addBlobs(image, plan.droplets, 0);
  addBlobs(image, plan.glare, 0.85);
  let blurred = image;
  if (plan.defocusSigma > 0) blurred = defocusBlur(blurred, plan.defocusSigma);
  if (plan.motionLength > 0) blurred = lineBlur(blurred, plan.motionLength, plan.motionAngle, "motion");
  return toEightBit(blurred, {
    gamma: plan.gamma,
    ...(plan.toneContrast ? { toneContrast: plan.toneContrast } : {}),
    noiseFloor: plan.noiseFloor,
    noiseShot: plan.noiseShot,
    seed: plan.noiseSeed,
  });
}
