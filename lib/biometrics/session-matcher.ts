import { compareTemplates, type PairComparison } from "./pair-matcher";
import type { NoseTemplate } from "./template";

/** The raw similarity of a probe set against an enrolled set, with every pair's figures (transparency). */
export interface SessionComparison {
  /** Mean of the two best probe images' best pair similarities (weighted inliers). */
  raw: number;
  /** pairs[p][e]: probe image p against enrolled image e. */
  pairs: PairComparison[][];
}

/**
 * Each probe image takes its best enrolled match; the session keeps the mean of the two best probe
 * images, so one blurred burst frame cannot sink a good session and one lucky image cannot carry a bad one.
 * `hypotheses`: how many of ROTATION_HYPOTHESES each pair tries (all, but for the 1:N light comparison).
 */
export function compareSessions(probe: readonly NoseTemplate[], enrolled: readonly NoseTemplate[], hypotheses?: number): SessionComparison {
  const pairs = probe.map((p) => enrolled.map((e) => compareTemplates(p, e, hypotheses)));
  return { raw: sessionRawScore(pairs.map((row) => row.map((pair) => pair.similarity))), pairs };
}

/** The session statistic from pair similarities: similarity[p][e] for probe image p and enrolled image e; to 0.05. */
export function sessionRawScore(similarity: readonly (readonly number[])[]): number {
  const bestPerProbe = similarity.map((row) => row.reduce((best, value) => Math.max(best, value), 0)).sort((a, b) => b - a);
  if (bestPerProbe.length === 0) return 0;
  const top = bestPerProbe.slice(0, 2);
  return Math.round((top.reduce((sum, value) => sum + value, 0) / top.length) * 20) / 20;
}
