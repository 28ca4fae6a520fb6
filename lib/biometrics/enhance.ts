import { createGreyImage, type GreyImage } from "./grey-image";
import { NORMALISE_MIN_STD, NORMALISE_SIGMA } from "./parameters";
import { normaliseLocalContrast } from "./simd/image-kernel";

/**
 * Local contrast normalisation: (I - local mean) / local std over a box about 2 sigma wide.
 * It removes lighting gradients and pigment patches so that only the bead-and-groove relief remains;
 * box sums via integral images keep it O(1) per pixel. NORMALISE_MIN_STD is a soft floor under the local
 * std: flat, noisy background (fur, table) stays faint instead of being stretched into texture.
 */
export function normaliseContrast(image: GreyImage): GreyImage {
  const { width, height, data } = image;
  const radius = Math.round(NORMALISE_SIGMA * 1.7);
  return createGreyImage(width, height, normaliseLocalContrast(data, width, height, radius, NORMALISE_MIN_STD * NORMALISE_MIN_STD));
}
