/**
 * Verification metrics over genuine (same animal) and impostor (different animal)
 * comparison scores. Higher score = more similar; a comparison is accepted when
 * score >= threshold. Everything is computed from sorted copies, so cost is
 * O(n log n) and 10^6 impostor scores are fine.
 */

export interface DetPoint {
  /** Accept when score >= threshold. `Infinity` is the "reject everything" end point. */
  threshold: number;
  /** False match rate: share of impostor scores accepted. */
  fmr: number;
  /** False non-match rate: share of genuine scores rejected. */
  fnmr: number;
}

export interface EqualErrorRate {
  eer: number;
  /**
   * Observed thresholds bracketing the FMR/FNMR crossing. They are equal when the
   * crossing falls exactly on an operating point (e.g. perfect separation).
   * Interpolating a threshold between them would be meaningless for integer scores.
   */
  lowerThreshold: number;
  upperThreshold: number;
}

export interface OperatingPoint {
  threshold: number;
  fmr: number;
  fnmr: number;
}

export interface HistogramOptions {
  min: number;
  max: number;
  bins: number;
}

export interface Histogram {
  /** bins + 1 bin edges; bin i covers [edges[i], edges[i+1]), the last bin also includes max. */
  edges: number[];
  counts: number[];
  /** Scores outside [min, max], reported rather than silently dropped or clamped. */
  underflow: number;
  overflow: number;
}

/** DET points for every distinct observed score, ascending by threshold, plus the Infinity end point. */
export function computeDet(genuine: readonly number[], impostor: readonly number[]): DetPoint[] {
  const g = sortedScores(genuine, "genuine");
  const im = sortedScores(impostor, "impostor");
  const points: DetPoint[] = [];
  // gi/ii = number of genuine/impostor scores strictly below the current threshold.
  let gi = 0;
  let ii = 0;
  while (gi < g.length || ii < im.length) {
    const threshold = Math.min(gi < g.length ? g[gi] : Infinity, ii < im.length ? im[ii] : Infinity);
    points.push({ threshold, fmr: (im.length - ii) / im.length, fnmr: gi / g.length });
    while (gi < g.length && g[gi] === threshold) gi++;
    while (ii < im.length && im[ii] === threshold) ii++;
  }
  points.push({ threshold: Infinity, fmr: 0, fnmr: 1 });
  return points;
}

/** EER, linearly interpolated on the DET segment where FMR - FNMR changes sign. */
export function equalErrorRate(genuine: readonly number[], impostor: readonly number[]): EqualErrorRate {
  const points = computeDet(genuine, impostor);
  // FMR - FNMR is 1 at the lowest threshold, -1 at Infinity and strictly decreasing
  // in between (each step moves at least one score from accepted to rejected).
  const k = points.findIndex((p) => p.fmr - p.fnmr <= 0);
  const at = points[k];
  if (at.fmr === at.fnmr) {
    return { eer: at.fmr, lowerThreshold: at.threshold, upperThreshold: at.threshold };
  }
  const before = points[k - 1];
  const dBefore = before.fmr - before.fnmr;
  const dAt = at.fmr - at.fnmr;
  const t = dBefore / (dBefore - dAt);
  return {
    eer: before.fmr + t * (at.fmr - before.fmr),
    lowerThreshold: before.threshold,
    upperThreshold: at.threshold,
  };
}

/**
 * FNMR at the lowest threshold whose FMR <= targetFmr. Because FMR only falls and
 * FNMR only rises with the threshold, that is the best FNMR meeting the target.
 * The threshold is Infinity (FNMR 1) when only rejecting everything meets it.
 */
export function fnmrAtFmr(
  genuine: readonly number[],
  impostor: readonly number[],
  targetFmr: number,
): OperatingPoint {
  if (!(targetFmr >= 0)) throw new RangeError(`targetFmr must be >= 0, got ${targetFmr}`);
  const points = computeDet(genuine, impostor);
  const point = points.find((p) => p.fmr <= targetFmr);
  // The Infinity end point has FMR 0, so a match always exists.
  return { ...point! };
}

/**
 * Area under the ROC curve = P(genuine > impostor) + P(genuine = impostor) / 2
 * (Mann–Whitney U / (n_g * n_i)), counted with two pointers over sorted scores.
 */
export function areaUnderRoc(genuine: readonly number[], impostor: readonly number[]): number {
  const g = sortedScores(genuine, "genuine");
  const im = sortedScores(impostor, "impostor");
  let below = 0; // impostors strictly below g[k]
  let upTo = 0; // impostors <= g[k]
  let wins = 0; // U statistic, doubled to stay in integers
  for (let k = 0; k < g.length; k++) {
    while (below < im.length && im[below] < g[k]) below++;
    if (upTo < below) upTo = below;
    while (upTo < im.length && im[upTo] === g[k]) upTo++;
    wins += 2 * below + (upTo - below);
  }
  return wins / (2 * g.length * im.length);
}

export function histogram(scores: readonly number[], { min, max, bins }: HistogramOptions): Histogram {
  if (!Number.isInteger(bins) || bins < 1) throw new RangeError(`bins must be a positive integer, got ${bins}`);
  if (!(Number.isFinite(min) && Number.isFinite(max) && max > min)) {
    throw new RangeError(`need finite min < max, got [${min}, ${max}]`);
  }
  const width = (max - min) / bins;
  const edges = Array.from({ length: bins + 1 }, (_, i) => (i === bins ? max : min + i * width));
  const counts = new Array<number>(bins).fill(0);
  let underflow = 0;
  let overflow = 0;
  for (const s of scores) {
    if (s < min) underflow++;
    else if (s > max) overflow++;
    else if (Number.isNaN(s)) throw new RangeError("score is NaN");
    else counts[Math.min(bins - 1, Math.floor((s - min) / width))]++;
  }
  return { edges, counts, underflow, overflow };
}

function sortedScores(scores: readonly number[], label: string): Float64Array {
  if (scores.length === 0) throw new RangeError(`${label} scores are empty`);
  const sorted = Float64Array.from(scores);
  // Infinity is reserved for the "reject everything" DET end point.
  for (const s of sorted) {
    if (!Number.isFinite(s)) throw new RangeError(`${label} scores must be finite, got ${s}`);
  }
  // Typed-array sort is numeric and much faster than Array#sort with a comparator.
  return sorted.sort();
}
