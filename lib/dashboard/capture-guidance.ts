// Live guidance for the camera at the counter: from a small grey copy of the framed centre of each
// video frame, whether the nose is sharp, lit without glare, and the camera gives enough pixels. Pure,
// so it is tested without a camera; the thresholds are the screen's hints, the engine has the last word.

export interface FrameGuidance {
  sharp: boolean;
  glare: boolean;
  dark: boolean;
  bigEnough: boolean;
  /** The one thing to fix first, or null when the frame looks good to shoot. */
  advice: string | null;
  sharpness: number;
  glareFraction: number;
  brightness: number;
}

/** Below this variance of the Laplacian (0-255 grey) a frame reads as out of focus. */
export const MIN_SHARPNESS = 60;
/** More than this share of near-white pixels is glare on a wet nose. */
export const MAX_GLARE = 0.04;
export const MIN_BRIGHTNESS = 50;
/** The shorter side of the camera's frame: below it the nose crop has too few pixels to match. */
export const MIN_FRAME_SIDE = 480;

/** Grey (0-255) from RGBA pixels, as the browser's canvas gives them. */
export function toGrey(rgba: Uint8ClampedArray): Float32Array {
  const grey = new Float32Array(rgba.length / 4);
  for (let i = 0; i < grey.length; i++) grey[i] = 0.299 * rgba[i * 4] + 0.587 * rgba[i * 4 + 1] + 0.114 * rgba[i * 4 + 2];
  return grey;
}

export function analyseFrame(grey: Float32Array, width: number, height: number, frameSide: number): FrameGuidance {
  let sum = 0;
  let bright = 0;
  for (const v of grey) {
    sum += v;
    if (v >= 245) bright++;
  }
  const brightness = sum / grey.length;
  const glareFraction = bright / grey.length;
  // Variance of the 4-neighbour Laplacian over the inner pixels.
  let n = 0;
  let mean = 0;
  let m2 = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const lap = grey[i - 1] + grey[i + 1] + grey[i - width] + grey[i + width] - 4 * grey[i];
      n++;
      const d = lap - mean;
      mean += d / n;
      m2 += d * (lap - mean);
    }
  }
  const sharpness = n > 1 ? m2 / (n - 1) : 0;
  const sharp = sharpness >= MIN_SHARPNESS;
  const glare = glareFraction > MAX_GLARE;
  const dark = brightness < MIN_BRIGHTNESS;
  const bigEnough = frameSide >= MIN_FRAME_SIDE;
  const advice = !bigEnough
    ? "This camera gives too few pixels: use the phone's rear camera."
    : dark
      ? "Too dark: add light or move out of the shadow."
      : glare
        ? "Glare on the nose: tilt the phone or dim the light."
        : !sharp
          ? "Not sharp: hold still and move closer until the nose pad fills the circle."
          : null;
  return { sharp, glare, dark, bigEnough, advice, sharpness, glareFraction, brightness };
}
