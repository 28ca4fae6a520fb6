import { compareTemplates, WHOLE_FRAME_HYPOTHESES, type PairComparison } from "./pair-matcher";
import { RERANK_KEYPOINTS, TURN_LIGHT_FLOOR, TURNED_PAIRS_MATCHED } from "./parameters";
import { sessionRawScore } from "./scoring";
import { strongestKeypoints, type NoseTemplate } from "./template";

/** The raw similarity of a probe set against an enrolled set, with every pair's figures (transparency). */
export interface SessionComparison {
  /** Mean of the two best probe images' best pair similarities (weighted inliers). */
  raw: number;
  /** pairs[p][e]: probe image p against enrolled image e (the better of upright and the probe's tried turn). */
  pairs: PairComparison[][];
}

/**
 * Each probe image takes its best enrolled match; the session keeps the mean of the two best probe
 * images, so one blurred burst frame cannot sink a good session and one lucky image cannot carry a bad one.
 * `hypotheses`: how many of ROTATION_HYPOTHESES each pair tries (all, but for the 1:N light comparison).
 */
export function compareSessions(probe: readonly NoseTemplate[], enrolled: readonly NoseTemplate[], hypotheses?: number): SessionComparison {
  // Enrolled image by enrolled image, so that the kernel lays each out once for every probe image (`blockNeighbours`).
  const pairs: PairComparison[][] = probe.map(() => new Array<PairComparison>(enrolled.length));
  enrolled.forEach((e, column) => probe.forEach((p, row) => (pairs[row][column] = compareTemplates(p, e, hypotheses))));
  return { raw: sessionRawScore(pairs.map((row) => row.map((pair) => pair.similarity))), pairs };
}

/** A probe image that can be looked at turned by a quarter turn (turns.ts `TurnableImage`). */
export interface TurnableProbe {
  view(turnDeg: number, limit?: number): NoseTemplate;
}

/**
 * A session comparison (`compareSessions`) with each probe image also tried at a quarter turn (decision 0029): each
 * pair keeps the better of its upright and its turned comparison (`turnedRow`; `rotationDeg` then includes the turn).
 * A probe image without a turnable view (null) keeps its upright row.
 */
export function withQuarterTurns(
  upright: SessionComparison,
  enrolled: readonly NoseTemplate[],
  turnable: readonly (TurnableProbe | null)[],
  turns: readonly number[],
): SessionComparison {
  const lightEnrolled = enrolled.map((e) => strongestKeypoints(e, RERANK_KEYPOINTS));
  const pairs = upright.pairs.map((row, p) => {
    const probe = turnable[p];
    if (!probe) return row;
    const turned = turnedRow(probe, enrolled, lightEnrolled, turns);
    return row.map((pair, e) => (turned[e] && turned[e].similarity > pair.similarity ? turned[e] : pair));
  });
  return { raw: sessionRawScore(pairs.map((row) => row.map((pair) => pair.similarity))), pairs };
}

/**
 * One probe image turned against a session's enrolled images: every quarter turn of `turns` compared lightly (the
 * cascade's light comparison: RERANK_KEYPOINTS strongest keypoints, `lightEnrolled`, whole-frame hypotheses) with every
 * enrolled image, and the TURNED_PAIRS_MATCHED (turn, enrolled image) pairs whose light comparison found the most (at
 * least TURN_LIGHT_FLOOR) matched in full. turned[e] is that full comparison with e (its `rotationDeg` including the turn), or
 * null when e was not matched turned.
 */
export function turnedRow(
  probe: TurnableProbe,
  enrolled: readonly NoseTemplate[],
  lightEnrolled: readonly NoseTemplate[],
  turns: readonly number[],
): (PairComparison | null)[] {
  const light: { turn: number; e: number; similarity: number }[] = [];
  for (const turn of turns) {
    const view = probe.view(turn, RERANK_KEYPOINTS);
    lightEnrolled.forEach((e, index) => light.push({ turn, e: index, similarity: compareTemplates(view, e, WHOLE_FRAME_HYPOTHESES).similarity }));
  }
  const chosen = light.filter((l) => l.similarity >= TURN_LIGHT_FLOOR).sort((a, b) => b.similarity - a.similarity).slice(0, TURNED_PAIRS_MATCHED);
  const turned: (PairComparison | null)[] = enrolled.map(() => null);
  for (const { turn, e } of chosen) {
    const full = compareTemplates(probe.view(turn), enrolled[e]);
    if (!turned[e] || full.similarity > turned[e].similarity) turned[e] = { ...full, rotationDeg: ((full.rotationDeg + turn + 180) % 360) - 180 };
  }
  return turned;
}
