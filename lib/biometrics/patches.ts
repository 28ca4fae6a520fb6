import type { GreyImage } from "./grey-image";
import { DESCRIPTOR_WINDOW_SIGMAS } from "./parameters";

/** A keypoint's patch is PATCH_SIZE x PATCH_SIZE samples. */
export const PATCH_SIZE = 16;
export const PATCH_PIXELS = PATCH_SIZE * PATCH_SIZE;
/** The patch covers DESCRIPTOR_WINDOW_SIGMAS keypoint sigmas. */
export const PATCH_WINDOW_SIGMAS = DESCRIPTOR_WINDOW_SIGMAS;
/** Patches stored as int8 (training data) hold this many steps per unit of the contrast-normalised image. */
export const PATCH_QUANT = 32;

/** The patch grid's steps along x and y per sample (turned by `angle`), and whether every sample lies inside a width x height image. */
export function patchFrame(
  keypoint: { x: number; y: number; sigma: number },
  angle: number,
  width: number,
  height: number,
): { cos: number; sin: number; inside: boolean } {
  const step = (PATCH_WINDOW_SIGMAS * keypoint.sigma) / PATCH_SIZE;
  const cos = Math.cos(angle) * step;
  const sin = Math.sin(angle) * step;
  const half = PATCH_SIZE / 2 - 0.5;
  // The grid's corners bound it: when all lie inside, no sample needs clamping (same values, fewer branches).
  const reach = half * (Math.abs(cos) + Math.abs(sin));
  const inside = keypoint.x - reach >= 0 && keypoint.x + reach <= width - 1.001 && keypoint.y - reach >= 0 && keypoint.y + reach <= height - 1.001;
  return { cos, sin, inside };
}

/**
 * The blurred scale level of a keypoint sampled bilinearly on a PATCH_SIZE² grid over its descriptor window,
 * in the frame turned by `angle` (radians; the same convention as the hand-made descriptor's frames), row by
 * row into `out` from `offset`. Coordinates outside the image are clamped to its border. Extraction samples in
 * the network kernel (simd/net-kernel.ts `runNetOnPatch`), with the same f64 operations in the same order; this
 * is the reference it is tested against, and the sampler of the training patches (lab/scripts/export-patches.ts).
 */
export function samplePatch(
  blurred: GreyImage,
  keypoint: { x: number; y: number; sigma: number },
  angle: number,
  out: Float32Array,
  offset = 0,
): void {
  const { width, height, data } = blurred;
  const { cos, sin, inside } = patchFrame(keypoint, angle, width, height);
  const half = PATCH_SIZE / 2 - 0.5;
  for (let j = 0; j < PATCH_SIZE; j++) {
    const v = j - half;
    for (let i = 0; i < PATCH_SIZE; i++) {
      const u = i - half;
      let x = keypoint.x + u * cos - v * sin;
      let y = keypoint.y + u * sin + v * cos;
      if (!inside) {
        x = x < 0 ? 0 : x > width - 1.001 ? width - 1.001 : x;
        y = y < 0 ? 0 : y > height - 1.001 ? height - 1.001 : y;
      }
      const x0 = x | 0;
      const y0 = y | 0;
      const fx = x - x0;
      const fy = y - y0;
      const p = y0 * width + x0;
      const top = data[p] + (data[p + 1] - data[p]) * fx;
      const bottom = data[p + width] + (data[p + width + 1] - data[p + width]) * fx;
      out[offset + j * PATCH_SIZE + i] = top + (bottom - top) * fy;
    }
  }
}

/** A patch as int8 at PATCH_QUANT steps per unit, clamped (training data files). */
export function quantisePatch(patch: Float32Array, out: Int8Array, offset = 0): void {
  for (let i = 0; i < PATCH_PIXELS; i++) {
    const q = Math.round(patch[i] * PATCH_QUANT);
    out[offset + i] = q > 127 ? 127 : q < -127 ? -127 : q;
  }
}
