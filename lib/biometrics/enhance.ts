import { createGreyImage, type GreyImage } from "./grey-image";
import { DARK_LIFT_K, DARK_LIFT_KNEE, NORMALISE_MIN_STD, NORMALISE_SIGMA } from "./parameters";
import { normaliseLocalContrast } from "./simd/image-kernel";

const DARK_LIFT_SCALE = DARK_LIFT_KNEE + DARK_LIFT_K;
const DARK_LIFT_AT_KNEE = DARK_LIFT_SCALE * Math.log1p(DARK_LIFT_KNEE / DARK_LIFT_K);

/**
 * The tone curve applied before the normalisation: dark grey levels lifted logarithmically (slope
 * DARK_LIFT_SCALE / (DARK_LIFT_K + g), 3.5 at black, 1 at the knee), the identity slope above the knee. Monotone and
 * continuous with its slope, so it moves no edge; it only changes how much relief a dark region's contrast counts for.
 */
export function liftDarkTones(g: number): number {
  return g < DARK_LIFT_KNEE ? DARK_LIFT_SCALE * Math.log1p(g / DARK_LIFT_K) : DARK_LIFT_AT_KNEE + (g - DARK_LIFT_KNEE);
}

/**
 * Local contrast normalisation: (I - local mean) / local std over a box about 2 sigma wide.
 * It removes lighting gradients and pigment patches so that only the bead-and-groove relief remains;
 * box sums via integral images keep it O(1) per pixel. NORMALISE_MIN_STD is a soft floor under the local
 * std: flat, noisy background (fur, table) stays faint instead of being stretched into texture. The grey levels go
 * through `liftDarkTones` first, so on dark regions the floor counts for as much relief as on mid-grey ones.
 */
export function normaliseContrast(image: GreyImage): GreyImage {
  const { width, height, data } = image;
  const lifted = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) lifted[i] = liftDarkTones(data[i]);
  const radius = Math.round(NORMALISE_SIGMA * 1.7);
  return createGreyImage(width, height, normaliseLocalContrast(lifted, width, height, radius, NORMALISE_MIN_STD * NORMALISE_MIN_STD));
}
