// Every tuned constant of the synthetic nose-print generator lives here, so that realism and
// difficulty can be adjusted without hunting through the rendering code.
// Units: "nose units" are the continuous nose coordinates; the pad spans roughly [-1, 1]² with
// y pointing down (image convention). The pad is ~30 mm wide, so 1 mm ≈ 0.067 nose units.

/** Bump when output for the same arguments changes (a new setting bumps the minor); recorded in manifest.json. */
export const GENERATOR_VERSION = "1.2.0";

export const SURFACE = {
  /** Half-extent of the rasterised surface map; captures may show a margin of fur around the pad. */
  mapExtent: 1.4,
  /** Plaque spacing at the centre/top (≈2.2 mm): the largest beads sit there on real noses. */
  plaqueSpacingMax: 0.15,
  /** Plaque spacing at the nostril rims and philtrum (≈0.6 mm): the smallest beads sit there. */
  plaqueSpacingMin: 0.042,
  /** Per-subject multiplier range of plaque size: breeds differ in bead coarseness. */
  plaqueScaleRange: [0.8, 1.15] as const,
  /** Nodes per axis of the tabulated spacing/pad fields used while placing seeds (≈0.6 mm node spacing). */
  shapeTableSize: 64,
  /** Bridson candidate attempts per active point; 24 gives a dense, gap-free packing. */
  poissonAttempts: 24,
  /** Splat radius per seed relative to its spacing: must cover every point where it is F2. */
  splatReach: 1.7,
  /** Groove half-width as a fraction of local spacing: grooves are narrow relative to beads. */
  grooveFraction: 0.07,
  /** Minimum groove half-width so that small beads still get a visible dark outline. */
  grooveMin: 0.0035,
  /** Width of the rounded plaque shoulder as a fraction of local spacing. */
  shoulderFraction: 0.3,
  /** Bead relief height relative to spacing (domes are low: ~0.2–0.3 mm on a 2 mm bead). */
  reliefFraction: 0.13,
  /** Cavity level below which a texel counts as groove (no moisture glint there). */
  glossyCavity: 0.75,
  /** Per-plaque height multiplier range: beads are not uniform in relief. */
  plaqueHeightRange: [0.7, 1.3] as const,
  /** Per-plaque albedo multiplier range: individual beads differ slightly in tone. */
  plaqueBrightnessRange: [0.82, 1.18] as const,
  /** Albedo multiplier at the bottom of a groove: grooves are shadowed crevices. */
  grooveDarkness: 0.28,
  /** Pad outline superellipse exponent range: from rounded to boxy noses. */
  padExponentRange: [2.4, 3.6] as const,
  /** Pad half-width / half-height ranges in nose units. */
  padRadiusX: [0.95, 1.05] as const,
  padRadiusY: [0.78, 0.9] as const,
  /** Soft edge of the pad where bead texture fades into haired skin. */
  padEdgeSoftness: 0.06,
  /** Nostril centre ranges (|x|, y): lower left and right of the pad. */
  nostrilCenterX: [0.55, 0.7] as const,
  nostrilCenterY: [0.2, 0.36] as const,
  /** Nostril outer ellipse radii: a tall comma-like opening. */
  nostrilRadiusX: [0.17, 0.24] as const,
  nostrilRadiusY: [0.2, 0.28] as const,
  /** Medial shift of the alar fold ellipse (fraction of outer radius) that carves the crescent. */
  alarShift: [0.3, 0.45] as const,
  /** Alar fold size relative to the nostril ellipse: leaves a crescent of opening. */
  alarScale: [0.78, 0.9] as const,
  /** Nostril tilt (radians, positive rotates the lower end outward): commas slant outward. */
  nostrilTilt: [0.15, 0.5] as const,
  /** Philtrum starts this far below the pad centre and runs to the bottom edge. */
  philtrumTop: [-0.05, 0.2] as const,
  /** Philtrum half-width at top and bottom: it widens toward the lip. */
  philtrumWidthTop: [0.012, 0.025] as const,
  philtrumWidthBottom: [0.035, 0.06] as const,
  /** Philtrum depth in relief units: a clear vertical channel. */
  philtrumDepth: 0.03,
  /** Fraction of subjects with depigmented (pink) patches, e.g. "butterfly" noses. */
  pinkSubjectProbability: 0.25,
  /** Spatial frequency of the pink-patch noise: patches are a few mm to ~1 cm. */
  pinkNoiseScale: [1.6, 3.2] as const,
  /** Threshold range for pink patches: higher = smaller patches. */
  pinkThreshold: [0.15, 0.45] as const,
  /** Low-frequency pigment mottling amplitude on dark noses: pigment is never perfectly even. */
  mottleAmplitude: 0.22,
  /** Width of the band at the map border where fur texture fades to its mean colour. */
  furFade: 0.35,
  /** Pigment grid subsampling: pigment is low-frequency, no need to evaluate per texel. */
  pigmentGridStep: 8,
} as const;

/** Base colours (linear RGB). */
export const PIGMENT = {
  /** Dark pigment albedo range (luminance): from black to slate grey noses. */
  darkAlbedo: [0.05, 0.16] as const,
  /** Warm/cool tint range for dark pigment: liver vs. black noses. */
  darkTint: [-0.25, 0.35] as const,
  /** Pink (depigmented) skin colour. */
  pink: [0.62, 0.36, 0.36] as const,
  /** Fur colour range (luminance) around the pad. */
  furAlbedo: [0.08, 0.55] as const,
  /** Nostril interior albedo: a deep hole reflects almost nothing. */
  nostrilAlbedo: 0.012,
} as const;

/** The settings posed by the affine/barrel camera below; "real" has its own camera (REAL). */
export type AffineDifficultyName = "normal" | "hard";
export type DifficultyName = AffineDifficultyName | "real";

export interface DifficultySettings {
  /** Longest output side in px. */
  longestSide: readonly [number, number];
  /** Aspect ratio (short/long). */
  aspect: readonly [number, number];
  /** Surface map resolution (texels across 2·mapExtent). */
  mapResolution: number;
  /** Supersampling factor per axis. */
  supersample: number;
  /** Fraction of min(W,H) that the pad width (2 units) spans before the similarity scale. */
  fill: readonly [number, number];
  rotationDeg: number;
  scale: readonly [number, number];
  /** Translation as fraction of image size. */
  translation: number;
  /** Keystone (perspective) coefficient magnitude. */
  keystone: number;
  /** Barrel yaw/pitch of the curved pad relative to the camera (radians). */
  yaw: number;
  pitch: number;
  /** Soft-tissue warp amplitude in nose units. */
  warpAmplitude: readonly [number, number];
  /** Probability and sigma range (px) of defocus blur. */
  defocusProbability: number;
  defocusSigma: readonly [number, number];
  /** Probability and kernel length range (px) of linear motion blur. */
  motionProbability: number;
  motionLength: readonly [number, number];
  /** Probability of glare patches and their peak strength. */
  glareProbability: number;
  glareStrength: readonly [number, number];
  /** Sensor noise sigma (8-bit units) at black and its shot-noise slope. */
  noiseFloor: readonly [number, number];
  noiseShot: readonly [number, number];
  jpegQuality: readonly [number, number];
  /** Number of free specular droplets and their peak strength (linear light). */
  droplets: readonly [number, number];
  dropletStrength: readonly [number, number];
  /** Burst size range (frames sharing geometry); 1 disables bursts. */
  burstSize: readonly [number, number];
}

/** The camera degradations every setting draws per capture (capture.ts planEffects). */
export type EffectSettings = Pick<
  DifficultySettings,
  | "defocusProbability"
  | "defocusSigma"
  | "motionProbability"
  | "motionLength"
  | "glareProbability"
  | "glareStrength"
  | "noiseFloor"
  | "noiseShot"
  | "jpegQuality"
  | "droplets"
  | "dropletStrength"
  | "warpAmplitude"
>;

export const DIFFICULTY: Record<AffineDifficultyName, DifficultySettings> = {
  normal: {
    longestSide: [480, 640], // phone photo cropped around the nose
    aspect: [0.75, 1.0], // 4:3 up to square
    mapResolution: 1024, // ≥ the largest on-screen pad size, keeps beads crisp
    supersample: 2, // 2×2 samples per pixel removes groove aliasing
    fill: [0.65, 0.95], // whole nose usually visible with some margin
    rotationDeg: 30, // handheld phone roll
    scale: [0.8, 1.25], // distance to the nose varies
    translation: 0.12, // nose not always centred; occasionally cut by the frame edge
    keystone: 0.06, // mild perspective tilt
    yaw: 0.25, // nose turned slightly left/right
    pitch: 0.2, // nose tilted slightly up/down
    warpAmplitude: [0.02, 0.05], // soft tissue squish of ~1–2.5% of the pad width
    defocusProbability: 0.35, // phones sometimes miss focus
    defocusSigma: [0.4, 1.3], // mild: details still legible
    motionProbability: 0.15, // occasional shake
    motionLength: [2, 4], // short streaks
    glareProbability: 0.15, // occasional bright reflection
    glareStrength: [0.2, 0.5], // washes out only partly
    noiseFloor: [0.5, 1.8], // daylight phone sensor
    noiseShot: [0.08, 0.25], // signal-dependent component
    jpegQuality: [70, 95], // typical phone/upload quality
    droplets: [1, 6], // a few loose moisture glints
    dropletStrength: [1.5, 4], // bright enough to clip
    burstSize: [1, 1], // independent photos
  },
  hard: {
    longestSide: [160, 350], // detector crops of a nose seen from some distance
    aspect: [0.78, 1.0], // detector boxes are near-square
    mapResolution: 512, // ~370 texels across the pad: the largest on-screen pad is ~450 px
    supersample: 1, // mip-filtered map already band-limits grooves; 2×2 would quadruple the cost
    fill: [0.8, 1.05], // tight crop; edges of the pad are sometimes cut off
    rotationDeg: 30, // handheld or animal moving its head
    scale: [0.8, 1.25], // detector box jitter
    translation: 0.1, // box not centred on the pad
    keystone: 0.1, // stronger perspective: photos taken at an angle
    yaw: 0.4, // nose turned noticeably; one side foreshortened
    pitch: 0.3, // nose tilted
    warpAmplitude: [0.03, 0.07], // animal pressing/moving nose: up to ~3.5% of the width
    defocusProbability: 0.4, // small crops from video are often soft
    defocusSigma: [0.4, 1.4], // up to clearly soft
    motionProbability: 0.5, // frames from bursts/video of a moving animal
    motionLength: [3, 9], // 3–9 px linear kernel as specified
    glareProbability: 0.45, // wet nose under flash or sunlight
    glareStrength: [0.35, 0.85], // can wash out a large part of the texture
    noiseFloor: [1, 3.5], // low light, digital zoom
    noiseShot: [0.15, 0.45], // stronger signal-dependent noise
    jpegQuality: [60, 85], // re-encoded crops
    droplets: [2, 10], // very wet noses
    dropletStrength: [1.5, 4], // bright enough to clip
    burstSize: [2, 4], // consecutive frames share geometry
  },
};

/** Per-frame jitter inside a burst (hard mode): frames are a fraction of a second apart. */
export const BURST_JITTER = {
  rotationDeg: 3, // hand tremor between frames
  scale: 0.04, // slight zoom/distance change
  translation: 0.03, // box jitter (fraction of size)
  yaw: 0.05, // head micro-movement
  pitch: 0.04,
  size: 0.08, // detector box size jitter
  lightAzimuthDeg: 12, // light moves a bit relative to the head
  warpBlend: 0.3, // fraction of the warp that is re-drawn per frame
} as const;

export const LIGHTING = {
  /** Light elevation range (radians from the surface plane): flash-like to side light. */
  elevation: [0.55, 1.35] as const,
  /** Ambient fraction: fill light in the room. */
  ambient: [0.15, 0.35] as const,
  /** Relief exaggeration range: apparent bead relief depends on light and lens. */
  bump: [0.8, 1.25] as const,
  /** Specular strength on wet bead tops. */
  specular: [0.3, 1.0] as const,
  /** Phong exponent as power of two (4 → 16, 6 → 64): sharp glints of a wet surface. */
  shininessLog2: [4, 6] as const,
  /** Fraction of beads that carry a moisture film in a given capture. */
  wetFraction: [0.15, 0.6] as const,
  /** Glint suppression on steep bead flanks (per unit slope²): the film drains off the flanks. */
  flankDrain: 4,
  /** Specular reflectance of dry beads relative to wet ones. */
  dryGloss: 0.12,
  /** Illumination gradient strength across the frame: uneven light falloff. */
  gradient: [0.0, 0.55] as const,
  /** Vignetting strength at the corners. */
  vignette: [0.0, 0.35] as const,
  /** Display gamma jitter around 2.2: phone tone curves differ. */
  gammaJitter: [0.85, 1.2] as const,
  /** Auto-exposure target for the mean linear luminance of the frame. */
  exposureTarget: [0.1, 0.2] as const,
  /** White-balance jitter per channel. */
  whiteBalance: 0.08,
} as const;

export const RENDER = {
  /** Mip selection: coarser map once a sample would skip more than this many texels (grooves are ≥2.5 texels wide, so 2 does not alias). */
  maxTexelsPerSample: 2,
  /** Geometry is evaluated on a coarse grid and interpolated: the mapping is smooth. */
  mapGridStep: 8,
  /** Number of sinusoidal components per axis of the soft-tissue warp: low frequency. */
  warpComponents: 3,
  /** Warp wavelength range in nose units: large-scale deformation only. */
  warpWavelength: [1.2, 3.5] as const,
  /** Curvature radius of the pad (nose units) for the barrel foreshortening. */
  curvatureX: [1.5, 2.0] as const,
  curvatureY: [2.2, 3.2] as const,
  /** Droplet radius range as fraction of the short side. */
  dropletRadius: [0.006, 0.02] as const,
  /** Glare patch radius range as fraction of the short side. */
  glareRadius: [0.1, 0.28] as const,
  /** Tone-curve lookup table size. */
  toneLutSize: 4096,
  /** Size of the precomputed normal-deviate table used for per-pixel noise. */
  noiseTableSize: 1024,
} as const;

/**
 * The "real" setting: crops whose statistics match real detector crops of owners' phone photos
 * (../shared/REAL-DATA.md; `npm run synth -- stats DIR` compares). The nose is a dome (the front of
 * an ellipsoid) ray-cast under a perspective camera, in front of a backdrop plane.
 */
export const REAL = {
  /**
   * Crop size (longer side, px; crops are square) as a quantile function: REAL-DATA.md's 5–95 %
   * points, tails to the ~70 px and ~900 px crops seen in real sets.
   */
  cropSizeQuantiles: [
    [0, 72],
    [0.004, 96],
    [0.05, 150],
    [0.25, 185],
    [0.5, 224],
    [0.75, 277],
    [0.95, 405],
    [0.99, 620],
    [1, 900],
  ] as const,
  /** Surface map resolution: the largest common crops show the pad at ~300 px. */
  mapResolution: 512,
  /** Fraction of the crop side that the pad width (2 units) spans: tight on the pad to pad-with-muzzle. */
  fill: [0.65, 1.05] as const,
  /**
   * The same with `--framing loose`: a phone photo at a clinic counter cut out by a loose detector box, so the
   * muzzle and the scene behind it (a table, a blanket) fill a fifth of the crop or more. Drawn from the same
   * random number as `fill`, so a loose set shows the same captures as its tight twin, only farther out.
   */
  looseFill: [0.5, 0.75] as const,
  /** Pad centre offset from the crop centre (fraction of the side): detector boxes are near-centred. */
  translation: 0.06,
  /** Roll of the head / phone (degrees, normal sigma and clamp): mostly upright, sometimes tilted. */
  rollSigmaDeg: 14,
  rollMaxDeg: 60,
  /**
   * Largest angle between the viewpoints of two captures of one nose (degrees): each capture looks
   * from within a cone of half this angle around the nose axis (top view against front view).
   */
  maxViewTurnDeg: 35,
  /** Camera distance from the pad centre in nose units (1 unit ≈ 15 mm): 12–30 cm phone close-ups. */
  cameraDistance: [8, 20] as const,
  /** Aim point jitter on the pad (nose units): the camera is not aimed at its exact centre. */
  aimJitter: 0.1,
  /** Dome (ellipsoid) half-axes in nose units: the pad is ~2 units wide and bulges ~1 unit. */
  domeRadiusX: [1.45, 1.9] as const,
  domeRadiusY: [1.6, 2.2] as const,
  domeDepth: [1.0, 1.6] as const,
  /** The dome's front-most point sits this far above the pad centre (nose units): noses face slightly down. */
  domeFrontY: [-0.35, -0.1] as const,
  /** Width of the silhouette fade in the dome's unit space: fur edge, not a cut-out. */
  silhouetteSoftness: 0.04,
  /** Smallest cosine of the surface normal to the view used for shading: grazing fur stays finite. */
  grazingCos: 0.15,
  /** Burst sizes: frames of one burst are near-duplicates; bursts of one nose differ in view and light. */
  burstSize: [1, 3] as const,
  /** Per-frame jitter of the view direction inside a burst (degrees). */
  burstViewJitterDeg: 2,
  /** Camera degradations per capture. */
  effects: {
    defocusProbability: 0.55, // phones focus past a close nose; soft crops are common
    defocusSigma: [0.4, 1.5] as const, // from slightly soft to beads wiped out
    motionProbability: 0.3, // the animal moves
    motionLength: [2, 6] as const, // px of streak
    glareProbability: 0.08, // glare is rare and small
    glareStrength: [0.2, 0.6] as const,
    noiseFloor: [0.6, 2] as const, // phone pipelines denoise: little grain survives
    noiseShot: [0.05, 0.25] as const,
    jpegQuality: [70, 92] as const, // app uploads
    droplets: [0, 2] as const, // a few loose moisture glints
    dropletStrength: [0.4, 1.5] as const, // glints rarely clip: real glare is rare and small
    warpAmplitude: [0.01, 0.03] as const, // soft tissue squish: the dome carries most of the change
  },
} as const;

/** Lighting of real captures (linear light; directions in the image frame, up = −y). */
export const REAL_LIGHTING = {
  /** Probability of a flash or a light beside the lens: light along the view axis. */
  onAxisProbability: 0.3,
  /** Elevation (radians above the image plane) of on-axis light. */
  onAxisElevation: [1.2, 1.5] as const,
  /** Elevation of room/daylight: from above at a slant. */
  roomElevation: [0.45, 1.15] as const,
  /** Spread of room-light azimuth around "from above" (radians). */
  roomAzimuthSpread: 1.2,
  /** Ambient fraction: indoor fill. */
  ambient: [0.1, 0.3] as const,
  /** Relief exaggeration: real beads shade more deeply than the affine settings' low domes. */
  bump: [0.9, 1.5] as const,
  /** Specular strength on wet beads. */
  specular: [0.1, 0.5] as const,
  /** Phong exponent as a power of two: small, sharp glints on bead tops. */
  shininessLog2: [5, 7] as const,
  /** Fraction of beads carrying a moisture film: a wet nose glints on most beads. */
  wetFraction: [0.3, 0.9] as const,
  /** Mean metered linear luminance of the crop (log-uniform): real crops are dark. */
  exposureTarget: [0.05, 0.17] as const,
  /** Strength of the phone's S-shaped tone curve (0 = plain gamma, 1 = the most that stays monotonic). */
  toneContrast: [0.3, 0.8] as const,
  /** Light falloff across the crop (fraction per crop width): one side of the muzzle in shade. */
  gradient: [0, 0.8] as const,
  /** Warm white balance of indoor/phone pictures: red gain up, blue gain down (per-capture range). */
  warmth: [0.0, 0.2] as const,
} as const;

/** Pigment of real subjects: black to liver-brown pads, some with pink or brown patches. */
export const REAL_PIGMENT = {
  /** Dark pigment albedo (luminance). */
  darkAlbedo: [0.01, 0.05] as const,
  /** Warm tint: 0 black, 1 liver brown. */
  tint: [0.05, 0.7] as const,
  /** Fraction of subjects with a patched (mottled) pad. */
  patchedProbability: 0.3,
  /** Among patched pads, the fraction whose patches are pink (the others brown). */
  pinkPatchProbability: 0.6,
  /** Fur albedo (luminance) around the pad: the muzzle is mostly lighter than the pad. */
  furAlbedo: [0.3, 1.0] as const,
  /** Brown patch colour (linear RGB). */
  brown: [0.32, 0.16, 0.09] as const,
} as const;

/** Backdrops of real captures (backdrop.ts): what shows around the muzzle. */
export const BACKDROP = {
  /** Distance of the backdrop plane behind the pad front (nose units): a table or blanket under the head. */
  depth: [2.5, 6] as const,
  /** Albedo (luminance) of backdrop colours: floors, tables, blankets. */
  albedo: [0.06, 0.5] as const,
  /** Colourfulness of backdrop colours (fraction of the level). */
  chroma: [0.05, 0.5] as const,
  /** Darker colour of a pattern relative to its light one. */
  patternDarkening: [0.2, 0.5] as const,
  /** Plain backdrops: tone variation between the corners of a tile and the tile size (nose units). */
  plainVariation: 0.15,
  plainPeriod: 12,
  /** Texels per side of texture tiles. */
  textureSize: 256,
  /** Textured backdrops: tile size in nose units (fabric weave to carpet blotches). */
  texturedPeriod: [1.5, 5] as const,
  /** The shared textured backdrop's tile: large, so nearby captures see the same stretch of it. */
  sharedTexturedPeriod: 8,
  /** How far the shared textured pattern shifts (nose units) and turns (radians) between captures. */
  sharedShift: 0.6,
  sharedTurn: 0.35,
  /** Lattice cells across a tile at the coarsest octave, octaves and their persistence. */
  noiseCells: 6,
  noiseOctaves: 4,
  noisePersistence: 0.6,
  /** Contrast stretch of the noise around its mean. */
  noiseContrast: 1.8,
  /** Grain anisotropy range (woven or brushed materials). */
  grainStretch: [1, 3] as const,
  /** Periodic pattern: period in nose units (5–12 mm) and periods per tile. */
  periodicPeriod: [0.3, 0.8] as const,
  periodicRepeats: [4, 8] as const,
} as const;

/** Hair around the pad of real captures (fur.ts). */
export const FUR = {
  /** Texels per side of the hair tile (a power of two: coordinates wrap with a mask). */
  textureSize: 256,
  /** Tile size in nose units on the dome. */
  tilePeriod: 2,
  /** Strands per texel: dense enough to cover the skin. */
  strandDensity: 0.06,
  /** Strand length as a fraction of the tile (muzzle hair is a few mm). */
  strandLength: [0.04, 0.12] as const,
  /** Spread of strand directions around the tile's flow (radians): hair lies roughly one way. */
  angleSpread: 0.5,
  /** Curvature of strands (fraction of their length). */
  bend: 0.15,
  /** How far one strand lightens or darkens the albedo. */
  contrast: 0.8,
  minFactor: 0.3,
  /** Pad-shape values over which the hair fades in outside the pad (1 = the pad's outline). */
  fadeIn: [0.95, 1.35] as const,
} as const;
