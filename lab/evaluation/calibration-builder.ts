import type { CalibrationTable } from "@/lib/biometrics/calibration";
import { MATCHER_REVISION, TEMPLATE_VERSION } from "@/lib/biometrics/parameters";
import { rawToFmr } from "@/lib/biometrics/scoring";

/** The tail used to extrapolate: impostor comparisons this rare or rarer. */
const TAIL_FMR = 0.01;
/** Extrapolation never falls slower than a decade per this many raw units (a guard for thin tails). */
const STEEPEST_ALLOWED_TAIL_SLOPE = -0.05;

/**
 * FMR(raw) = share of impostor raw similarities ≥ raw, at every distinct observed value; beyond the
 * largest, an exponential tail fitted by least squares on log10(FMR) over the rarest 1 %.
 */
export function buildCalibrationTable(impostorRaw: readonly number[], measuredOn: string): CalibrationTable {
  if (impostorRaw.length === 0) throw new Error("calibration needs impostor comparisons");
  const sorted = [...impostorRaw].sort((a, b) => a - b);
  const total = sorted.length;
  const points: { raw: number; fmr: number }[] = [];
  for (let i = 0; i < total; i++) {
    if (i > 0 && sorted[i] === sorted[i - 1]) continue;
    points.push({ raw: sorted[i], fmr: (total - i) / total });
  }
  const tail = points.filter((p) => p.fmr <= TAIL_FMR);
  const fitted = tail.length >= 2 ? tail : points.slice(-2);
  let slope = STEEPEST_ALLOWED_TAIL_SLOPE;
  if (fitted.length >= 2) {
    const meanX = fitted.reduce((s, p) => s + p.raw, 0) / fitted.length;
    const meanY = fitted.reduce((s, p) => s + Math.log10(p.fmr), 0) / fitted.length;
    const sxx = fitted.reduce((s, p) => s + (p.raw - meanX) ** 2, 0);
    const sxy = fitted.reduce((s, p) => s + (p.raw - meanX) * (Math.log10(p.fmr) - meanY), 0);
    if (sxx > 0) slope = Math.min(STEEPEST_ALLOWED_TAIL_SLOPE, sxy / sxx);
  }
  return { points, tailSlope: Math.round(slope * 1e4) / 1e4, impostorComparisons: total, measuredOn, templateVersion: TEMPLATE_VERSION, matcherRevision: MATCHER_REVISION };
}

/**
 * One table for several kinds of photo (a hard set's and a normal set's impostors): at every raw similarity
 * the largest of the tables' FMRs, so that a score's FMR holds for each kind, not only for their mix. Beyond the
 * last point the shallowest tail, which never extrapolates below any table's own.
 */
export function combineCalibrationTables(tables: readonly CalibrationTable[], measuredOn: string): CalibrationTable {
  if (tables.length === 0) throw new Error("combining needs at least one calibration table");
  const raws = [...new Set(tables.flatMap((t) => t.points.map((p) => p.raw)))].sort((a, b) => a - b);
  const points = raws.map((raw) => ({ raw, fmr: Math.max(...tables.map((t) => rawToFmr(raw, t))) }));
  return {
    points,
    tailSlope: Math.max(...tables.map((t) => t.tailSlope)),
    impostorComparisons: tables.reduce((sum, t) => sum + t.impostorComparisons, 0),
    measuredOn,
    templateVersion: TEMPLATE_VERSION,
    matcherRevision: MATCHER_REVISION,
  };
}
