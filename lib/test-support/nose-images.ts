import sharp from "sharp";

// Test images for the API's biometric paths: a pet is a seeded random blob texture (the stand-in
// for a nose pad), a capture is that texture seen slightly rotated, shifted and re-compressed.
// They go through the real engine; nothing here decides a match.

function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000;
  };
}

const TEXTURE_SIDE = 640;

async function texture(petSeed: number): Promise<Buffer> {
  const rand = prng(petSeed * 7919 + 17);
  const cells = 160;
  const noise = Buffer.alloc(cells * cells);
  for (let i = 0; i < noise.length; i++) noise[i] = Math.floor(rand() * 256);
  return sharp(noise, { raw: { width: cells, height: cells, channels: 1 } })
    .resize(TEXTURE_SIDE, TEXTURE_SIDE, { kernel: "cubic" })
    .normalise()
    .raw()
    .toBuffer();
}

/** One JPEG capture of pet `petSeed`; `captureIndex` varies pose a little. */
export async function noseCapture(petSeed: number, captureIndex: number): Promise<Buffer> {
  const rand = prng(petSeed * 104_729 + captureIndex * 31 + 5);
  const base = await texture(petSeed);
  const angle = (rand() - 0.5) * 12;
  const rotated = await sharp(base, { raw: { width: TEXTURE_SIDE, height: TEXTURE_SIDE, channels: 1 } })
    .rotate(angle, { background: { r: 128, g: 128, b: 128 } })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const side = 480;
  const left = Math.floor((rotated.info.width - side) / 2 + (rand() - 0.5) * 30);
  const top = Math.floor((rotated.info.height - side) / 2 + (rand() - 0.5) * 30);
  return sharp(rotated.data, { raw: { width: rotated.info.width, height: rotated.info.height, channels: 1 } })
    .extract({ left, top, width: side, height: side })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** A plain, featureless JPEG: decodes fine, but the engine should find it unusable (or blank). */
export function flatJpeg(width = 400, height = 400): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 120, g: 110, b: 100 } } }).jpeg().toBuffer();
}

/** An ordinary photo-like JPEG for appearance uploads. */
export function appearanceJpeg(seed = 1): Promise<Buffer> {
  const rand = prng(seed);
  return sharp({ create: { width: 320, height: 240, channels: 3, background: { r: Math.floor(rand() * 255), g: 140, b: 90 } } })
    .jpeg()
    .toBuffer();
}

/** A capture of pet `petSeed` so defocused that the engine accepts it but finds it unusable. */
export async function blurredNoseCapture(petSeed: number, captureIndex: number): Promise<Buffer> {
  return sharp(await noseCapture(petSeed, captureIndex)).blur(30).jpeg({ quality: 90 }).toBuffer();
}
