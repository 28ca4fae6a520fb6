import { PAIR_CALIBRATION, SESSION_CALIBRATION, type CalibrationTable } from "./calibration";

/**
 * Scores mean false-match rates: score = -10 * log10(FMR), clamped to 0–100, where FMR is the share of
 * impostor comparisons (different pets) whose raw similarity reaches the same value. So 20 ≈ 1 % FMR,
 * 30 ≈ 0.1 %, 40 ≈ 0.01 %, 60 ≈ one in a million. FMRs below the measured range are extrapolated from the
 * exponential tail of the impostor distribution. The tables are measured by `npm run calibrate`.
 */
export const SCORE_PER_DECADE = 10;

/** The default decision threshold: FMR ≤ 0.01 %. */
export const DECISION_THRESHOLD = 40;

/** The false-match rate a score stands for: 40 → 0.0001 (one in 10,000). */
export function scoreToFmr(score: number): number {
  return 10 ** (-score / SCORE_PER_DECADE);
}

export function fmrToScore(fmr: number): number {
  if (fmr >= 1) return 0;
  return Math.min(100, Math.max(0, -SCORE_PER_DECADE * Math.log10(fmr)));
}

/** Estimated false-match rate of a raw similarity, from a calibration table. */
export function rawToFmr(raw: number, table: CalibrationTable): number {
  const { points, tailSlope } = table;
  if (points.length === 0 || raw <= points[0].raw) return 1;
  for (let i = 1; i < points.length; i++) {
    if (raw <= points[i].raw) {
      const a = points[i - 1];
      const b = points[i];
      const t = (raw - a.raw) / (b.raw - a.raw);
      return 10 ** (Math.log10(a.fmr) + t * (Math.log10(b.fmr) - Math.log10(a.fmr)));
    }
  }
  const last = points[points.length - 1];
  return 10 ** (Math.log10(last.fmr) + tailSlope * (raw - last.raw));
}

function toScore(raw: number, table: CalibrationTable): number {
  return Math.round(fmrToScore(rawToFmr(raw, table)) * 10) / 10;
}

/** 0–100 score of a probe session (≥ 3 images) against an enrolment (≥ 5 images). */
export function sessionScore(raw: number): number {
  return toScore(raw, SESSION_CALIBRATION);
}

/** 0–100 score of one nose image against another. */
export function pairScore(similarity: number): number {
  return toScore(similarity, PAIR_CALIBRATION);
}

/** The session statistic from pair similarities: similarity[p][e] for probe image p and enrolled image e; to 0.05. */
export function sessionRawScore(similarity: readonly (readonly number[])[]): number {
  const bestPerProbe = similarity.map((row) => row.reduce((best, value) => Math.max(best, value), 0)).sort((a, b) => b - a);
  if (bestPerProbe.length === 0) return 0;
  const top = bestPerProbe.slice(0, 2);
  return Math.round((top.reduce((sum, value) => sum + value, 0) / top.length) * 20) / 20;
}

/**
 * Whether a comparison of this upright raw similarity also tries quarter turns: the decision threshold does not accept
 * it on the comparison's own scale (`sessionScore` for a session, `pairScore` for a single image pair). The one rule
 * verification, the 1:N turned pass, single image pairs and the evaluation protocol (hence the calibration) follow.
 */
export function triesQuarterTurns(uprightRaw: number, scale: (raw: number) => number = sessionScore): boolean {
  return scale(uprightRaw) < DECISION_THRESHOLD;
}
