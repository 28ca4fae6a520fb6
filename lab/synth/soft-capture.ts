/**
 * A capture degraded the way real genuine pairs fail (docs/engine.md, "The soft-capture yardstick"): at the engine's
 * working size (WORK_SIZE, 320 px) either a Gaussian defocus of sigma 2–4 px or a motion blur 6–14 px long at any
 * angle, then a darker exposure (grey levels times 0.35–0.65), re-encoded as JPEG quality 85. Deterministic: the
 * degradation follows from (seed, subject, capture). Used by `npm run degrade:set` and by the identification bench's `real-soft` probes.
 */
import sharp from "sharp";
import { WORK_SIZE } from "@/lib/biometrics/parameters";
import { hashSeed, Rng } from "./prng";

/** The soft-capture yardstick's seed (`npm run degrade:set`'s default; the identification bench's `real-soft` probes). */
export const YARDSTICK_SEED = 1;

/** A normalised line kernel `length` px long at `angle`, one px wide (bilinear splats along the line). */
function motionKernel(length: number, angle: number): { width: number; height: number; kernel: number[] } {
  const size = 2 * Math.ceil(length / 2) + 1;
  const kernel = new Array<number>(size * size).fill(0);
  const centre = (size - 1) / 2;
  const steps = Math.ceil(length * 4);
  for (let s = 0; s <= steps; s++) {
    const t = (s / steps - 0.5) * length;
    const x = centre + t * Math.cos(angle);
    const y = centre + t * Math.sin(angle);
    const x0 = Math.floor(x);
    const y0 = Math.floor(y);
    for (const [xi, yi, w] of [
      [x0, y0, (1 - (x - x0)) * (1 - (y - y0))],
      [x0 + 1, y0, (x - x0) * (1 - (y - y0))],
      [x0, y0 + 1, (1 - (x - x0)) * (y - y0)],
      [x0 + 1, y0 + 1, (x - x0) * (y - y0)],
    ]) {
      if (xi >= 0 && xi < size && yi >= 0 && yi < size) kernel[yi * size + xi] += w;
    }
  }
  const total = kernel.reduce((a, b) => a + b, 0);
  return { width: size, height: size, kernel: kernel.map((k) => k / total) };
}

/** Subject `subject`'s capture `capture` (0-based, in name order) degraded, the same for the same seed. */
export async function softCapture(jpeg: Buffer, seed: number, subject: number, capture: number): Promise<Buffer> {
  const rng = new Rng(hashSeed(seed, subject, capture));
  const input = sharp(jpeg).rotate();
  const { width = 0, height = 0 } = await input.metadata();
  const toOriginal = Math.max(width, height) / WORK_SIZE;
  let image = input;
  if (rng.chance(0.5)) {
    image = image.blur(Math.max(0.3, rng.range(2, 4) * toOriginal));
  } else {
    image = image.convolve(motionKernel(Math.max(2, rng.range(6, 14) * toOriginal), rng.range(0, Math.PI)));
  }
  const gain = rng.range(0.35, 0.65);
  return image.linear(gain, 0).jpeg({ quality: 85 }).toBuffer();
}
