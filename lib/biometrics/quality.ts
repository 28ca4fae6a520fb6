import { gaussianBlur, gradients, meanAndStd, type GreyImage } from "./grey-image";
import { MIN_INPUT_SIDE, QUALITY_MIN_KEYPOINTS, QUALITY_USABLE_THRESHOLD } from "./parameters";

/** The measured figures behind a quality score; support sees these for failed jobs. */
export interface QualityFigures {
  /** Mean gradient magnitude of the lightly smoothed image relative to its contrast (defocus and motion blur lower it). */
  sharpness: number;
  /** Mean grey level, 0–255. */
  brightness: number;
  /** Fraction of pixels at or above 250 (glare, wet-nose highlights). */
  glareFraction: number;
  /** Fraction of pixels at or below 5 (crushed shadows). */
  shadowFraction: number;
  /** Standard deviation of grey levels. */
  contrast: number;
  /** Shorter side of the uploaded image in pixels. */
  resolution: number;
  /** Keypoints found on the nose texture. */
  keypoints: number;
}

export type QualityReason =
  | "out of focus or motion-blurred"
  | "too dark"
  | "overexposed"
  | "glare washes out the texture"
  | "too little contrast"
  | "resolution too low"
  | "too little nose texture visible";

export interface QualityReport {
  /** 0–100; below QUALITY_USABLE_THRESHOLD the image is unusable. */
  score: number;
  usable: boolean;
  reasons: QualityReason[];
  figures: QualityFigures;
}

/** Linear ramp from 0 at `low` to 1 at `high`. */
function ramp(value: number, low: number, high: number): number {
  return Math.min(1, Math.max(0, (value - low) / (high - low)));
}

/** The quality gate's verdict on an image of this score and keypoint count. */
export function isUsableQuality(score: number, keypoints: number): boolean {
  return score >= QUALITY_USABLE_THRESHOLD && keypoints >= QUALITY_MIN_KEYPOINTS;
}

/**
 * Each component is 0–1; weights sum to 1. Ramps are set from measured figures of the synthetic hard set:
 * a sharp crop has sharpness 0.08–0.17 and 220–300 keypoints; blurred by sigma 3 it still matches its
 * burst-mates (22 inliers); blurred by sigma 6 it has sharpness 0.03–0.055 and under 90 keypoints. With the
 * usable threshold at 40 (about the score of a well-exposed crop with no sharpness or texture grade left), the
 * score names what is wrong while the verdict refuses only what cannot be read: bad exposure, heavy glare, or fewer
 * than QUALITY_MIN_KEYPOINTS keypoints. A soft crop keeps its nose's large structures and still matches it far above
 * impostors (decision 0014).
 */
const COMPONENTS: { reason: QualityReason; weight: number; grade: (f: QualityFigures) => number }[] = [
  { reason: "out of focus or motion-blurred", weight: 0.3, grade: (f) => ramp(f.sharpness, 0.05, 0.1) },
  { reason: "too little nose texture visible", weight: 0.3, grade: (f) => ramp(f.keypoints, 60, 220) },
  { reason: "too dark", weight: 0.075, grade: (f) => ramp(f.brightness, 15, 45) },
  { reason: "overexposed", weight: 0.075, grade: (f) => 1 - ramp(f.brightness, 200, 240) },
  { reason: "glare washes out the texture", weight: 0.1, grade: (f) => 1 - ramp(f.glareFraction, 0.05, 0.35) },
  { reason: "too little contrast", weight: 0.05, grade: (f) => ramp(f.contrast, 6, 20) },
  { reason: "resolution too low", weight: 0.1, grade: (f) => ramp(f.resolution, MIN_INPUT_SIDE, 2 * MIN_INPUT_SIDE) },
];

export function measureImageFigures(grey: GreyImage, resolution: number): Omit<QualityFigures, "keypoints"> {
  const { mean, std } = meanAndStd(grey.data);
  let glare = 0;
  let shadow = 0;
  for (let i = 0; i < grey.data.length; i++) {
    if (grey.data[i] >= 250) glare++;
    else if (grey.data[i] <= 5) shadow++;
  }
  const { gx, gy } = gradients(gaussianBlur(grey, 0.8));
  let gradientSum = 0;
  for (let i = 0; i < gx.length; i++) gradientSum += Math.sqrt(gx[i] * gx[i] + gy[i] * gy[i]);
  return {
    sharpness: gradientSum / gx.length / Math.max(std, 1),
    brightness: mean,
    glareFraction: glare / grey.data.length,
    shadowFraction: shadow / grey.data.length,
    contrast: std,
    resolution,
  };
}

export function assessQuality(figures: QualityFigures): QualityReport {
  let score = 0;
  const reasons: QualityReason[] = [];
  for (const component of COMPONENTS) {
    const grade = component.grade(figures);
    score += component.weight * grade;
    if (grade < 0.5) reasons.push(component.reason);
  }
  const rounded = Math.round(score * 100);
  const usable = isUsableQuality(rounded, figures.keypoints);
  if (!usable && figures.keypoints < QUALITY_MIN_KEYPOINTS && !reasons.includes("too little nose texture visible")) {
    reasons.push("too little nose texture visible");
  }
  return { score: rounded, usable, reasons, figures };
}
