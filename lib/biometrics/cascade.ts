import { promoteByLightScore, rerankNeeded, sortCandidates, type LightScore } from "./candidates";
import type { GalleryShortlist } from "./gallery-shortlist";
import { DEEP_EARLY_LIGHT, DEEP_LIGHT_FIRST, DESCRIPTOR_SETS, FIRST_STAGE_PROMOTED, MATCHED_SETS, RERANK_CANDIDATES, SHORTLIST_SIZE, TURNED_PASS_IMAGES } from "./parameters";
import type { IdentificationCandidate, IdentificationOutcome } from "./operations";

/** Full matching of some pets: those at or above the decision threshold (best first), how many were compared, the best raw. */
export interface CandidateRanking {
  candidates: IdentificationCandidate[];
  /** Pets matched in full (a pet without templates, e.g. deleted meanwhile, is not). */
  compared: number;
  bestRaw: number;
}

/** The cascade's passes and the steps of each, as `CascadeStages.observe` is told them. */
export type CascadePass = "fast" | "deep" | "turned";
export type CascadeStep = "first stage" | "light" | "full" | "views";

/**
 * What the cascade runs on: the service's sharded gallery and worker pool (index.ts `identifyInGallery`) or one
 * gallery in this thread (operations.ts `identifyAmong`, the evaluation's path). Each stage receives pet ids and
 * loads what it needs itself.
 */
export interface CascadeStages {
  /** The first stage: the `limit` best pets by the probe's first `sets` descriptor frames, best first. */
  shortlist(limit: number, sets: number): Promise<GalleryShortlist>;
  /** The full matcher on these pets. */
  rank(petIds: string[]): Promise<CandidateRanking>;
  /**
   * The full matcher on batches of pets in turn, up to the first batch that accepts a pet (`rankInTurn`); a stage that
   * reads templates reads every batch's at once. Without it, `rank` runs on each batch.
   */
  rankBatches?(batches: string[][]): Promise<CandidateRanking>;
  /** The light comparison of these pets (`lightRawScores`). */
  compareLightly(petIds: string[]): Promise<LightScore[]>;
  /**
   * The stages of the probe's quarter-turned views (decision 0029), made only when the passes upright accepted nobody;
   * null when the probe cannot be turned (no JPEGs). Their shortlist and light comparison read the views of the images
   * `turnedPassImages` picks, their full matching is the verification's: upright, then each probe image at its most
   * promising turn.
   */
  turned?: () => Promise<Omit<CascadeStages, "turned"> | null>;
  /** Told as each step begins (a step ends where the next begins, or with the search): for benches. */
  observe?: (pass: CascadePass, step: CascadeStep) => void;
}

/**
 * The 1:N cascade, the one the service and the evaluation run. Each pass ranks its candidates by the first stage,
 * compares them lightly, and matches the best of those (`promoteByLightScore`) in full.
 * - Fast pass: the first stage by the probe's matched frames (MATCHED_SETS), its SHORTLIST_SIZE best; besides the
 *   lightly best, the first stage's FIRST_STAGE_PROMOTED best are matched in full. A pet accepted here ends the search:
 *   what almost every genuine probe gets.
 * - Deep pass, only when the fast one accepted nobody (`rerankNeeded`): the first stage by all five frames (the ± 40°
 *   ones reach turned captures), its RERANK_CANDIDATES best; those the fast pass did not compare are compared lightly,
 *   and the best of all lightly compared pets not matched in full yet are; in steps that end it at the first accepted
 *   pet (`deepPass`).
 * - Turned pass, only when the deep one accepted nobody too and the stages can turn the probe (`turned`): the fast
 *   pass again on the quarter-turned views of the probe's best images (`turnedPassImages`), for a nose photographed at
 *   any roll.
 */
export async function runCascade(stages: CascadeStages): Promise<IdentificationOutcome> {
  const observe = stages.observe ?? (() => {});
  const { fastLight, fastPromoted, head, shortlisted } = await fastPass(stages, "fast", observe);
  const details = { searched: shortlisted.searched, shortlisted: shortlisted.petIds.length, reranked: fastLight.length, compared: head.compared, bestRaw: head.bestRaw };
  if (!rerankNeeded(head.candidates.length)) return { candidates: sortCandidates(head.candidates), details };
  const deep = await deepPass(stages, { shortlisted, fastLight, fastPromoted }, observe);
  const deepDetails = {
    ...details,
    shortlisted: shortlisted.petIds.length + deep.shortlisted,
    reranked: fastLight.length + deep.reranked,
    compared: head.compared + deep.ranking.compared,
    bestRaw: Math.max(head.bestRaw, deep.ranking.bestRaw),
  };
  const upright = { candidates: sortCandidates([...head.candidates, ...deep.ranking.candidates]), details: deepDetails };
  if (!rerankNeeded(upright.candidates.length) || !stages.turned) return upright;
  observe("turned", "views");
  const turnedStages = await stages.turned();
  if (!turnedStages) return upright;
  const turned = await fastPass(turnedStages, "turned", observe);
  return {
    candidates: sortCandidates(turned.head.candidates),
    details: {
      ...deepDetails,
      shortlisted: deepDetails.shortlisted + turned.shortlisted.petIds.length,
      reranked: deepDetails.reranked + turned.fastLight.length,
      compared: deepDetails.compared + turned.head.compared,
      bestRaw: Math.max(deepDetails.bestRaw, turned.head.bestRaw),
    },
  };
}

/**
 * The probe images whose quarter-turned views the turned pass shortlists and compares lightly: among those that can be
 * turned (`turnable[p]`), the TURNED_PASS_IMAGES of highest quality (the earlier of equals), in probe order.
 */
export function turnedPassImages(qualities: readonly number[], turnable: readonly boolean[]): number[] {
  return qualities
    .map((quality, p) => ({ quality, p }))
    .filter(({ p }) => turnable[p])
    .sort((a, b) => b.quality - a.quality || a.p - b.p)
    .slice(0, TURNED_PASS_IMAGES)
    .map(({ p }) => p)
    .sort((a, b) => a - b);
}

/** The fast pass: the first stage's SHORTLIST_SIZE best by the matched frames, compared lightly, the best matched in full. */
async function fastPass(stages: Omit<CascadeStages, "turned">, pass: CascadePass, observe: NonNullable<CascadeStages["observe"]>) {
  observe(pass, "first stage");
  const shortlisted = await stages.shortlist(SHORTLIST_SIZE, MATCHED_SETS);
  observe(pass, "light");
  const fastLight = await compareLightly(stages, shortlisted.petIds);
  const lightBest = promoteByLightScore(fastLight);
  const firstStageBest = shortlisted.petIds.slice(0, FIRST_STAGE_PROMOTED);
  const fastPromoted = [...new Set([...lightBest, ...firstStageBest])];
  observe(pass, "full");
  // The lightly best and the first stage's best first: the true pet is almost always one of them, and accepted it ends
  // the pass before the others are matched.
  const first = [...new Set([...lightBest.slice(0, 1), ...firstStageBest])];
  const batches = [first, fastPromoted.filter((petId) => !first.includes(petId))];
  const head = await (stages.rankBatches ? stages.rankBatches(batches) : rankInTurn(batches, (petIds) => stages.rank(petIds)));
  return { shortlisted, fastLight, fastPromoted, head };
}

/**
 * The deep pass (`runCascade`), in steps that end it as soon as a pet is accepted:
 * 1. the fast pass's lightly compared pets not matched in full whose light similarity reaches DEEP_EARLY_LIGHT are
 *    matched in full (a true pet the light comparison ranked fifth or lower among the fast pass's 16);
 * 2. the deep first stage's candidates the fast pass did not compare are compared lightly, the first DEEP_LIGHT_FIRST
 *    of them first; after that step, those reaching DEEP_EARLY_LIGHT (best first, at most RERANK_PROMOTED) are matched
 *    in full;
 * 3. the rest are compared lightly, and the RERANK_PROMOTED best of every lightly compared pet not matched in full by
 *    the fast pass (`promoteByLightScore`) are matched in full, less those matched already.
 * Step 3 matches what a single step over every candidate would, so a search that reaches it has compared in full every
 * pet that step would have; the earlier steps only end a search sooner or match a few pets more.
 */
async function deepPass(
  stages: Omit<CascadeStages, "turned">,
  fast: { shortlisted: GalleryShortlist; fastLight: LightScore[]; fastPromoted: string[] },
  observe: NonNullable<CascadeStages["observe"]>,
): Promise<{ ranking: CandidateRanking; shortlisted: number; reranked: number }> {
  const matched = new Set(fast.fastPromoted);
  // Every pet compared lightly and not matched in full by the fast pass: what the last step promotes from.
  const light = fast.fastLight.filter((score) => !matched.has(score.petId));
  const rankings: CandidateRanking[] = [];
  let shortlisted = 0;
  let reranked = 0;
  const outcome = () => ({ ranking: joinRankings(rankings), shortlisted, reranked });
  /** Matches these pets in full; whether one was accepted. */
  const matchFully = async (petIds: string[]) => {
    petIds.forEach((petId) => matched.add(petId));
    observe("deep", "full");
    const ranking = await stages.rank(petIds);
    rankings.push(ranking);
    return !rerankNeeded(ranking.candidates.length);
  };
  /** Matches in full the lightly compared pets not matched yet that reach DEEP_EARLY_LIGHT (none: false); whether one was accepted. */
  const matchLikely = async () => {
    const likely = promoteByLightScore(light.filter((score) => score.raw >= DEEP_EARLY_LIGHT && !matched.has(score.petId)));
    return likely.length > 0 && matchFully(likely);
  };
  if (await matchLikely()) return outcome();
  observe("deep", "first stage");
  const seen = new Set(fast.shortlisted.petIds);
  const rest = (await stages.shortlist(RERANK_CANDIDATES, DESCRIPTOR_SETS)).petIds.filter((petId) => !seen.has(petId));
  shortlisted = rest.length;
  observe("deep", "light");
  const first = await compareLightly(stages, rest.slice(0, DEEP_LIGHT_FIRST));
  light.push(...first);
  reranked = first.length;
  if (rest.length > DEEP_LIGHT_FIRST) {
    if (await matchLikely()) return outcome();
    observe("deep", "light");
    const others = await compareLightly(stages, rest.slice(DEEP_LIGHT_FIRST));
    light.push(...others);
    reranked += others.length;
  }
  await matchFully(promoteByLightScore(light).filter((petId) => !matched.has(petId)));
  return outcome();
}

function compareLightly(stages: Omit<CascadeStages, "turned">, petIds: string[]): Promise<LightScore[]> {
  return petIds.length > 0 ? stages.compareLightly(petIds) : Promise.resolve([]);
}

/** Full matching of batches of pets in turn, up to the first batch that accepts a pet (empty batches are skipped); joined. */
export async function rankInTurn(batches: readonly string[][], rank: (petIds: string[]) => Promise<CandidateRanking>): Promise<CandidateRanking> {
  const rankings: CandidateRanking[] = [];
  for (const batch of batches) {
    if (batch.length === 0) continue;
    const ranking = await rank(batch);
    rankings.push(ranking);
    if (!rerankNeeded(ranking.candidates.length)) break;
  }
  return joinRankings(rankings);
}

/** Joins the full matching of several shares of the pets. */
export function joinRankings(rankings: readonly CandidateRanking[]): CandidateRanking {
  return {
    candidates: sortCandidates(rankings.flatMap((ranking) => ranking.candidates)),
    compared: rankings.reduce((sum, ranking) => sum + ranking.compared, 0),
    bestRaw: rankings.reduce((best, ranking) => Math.max(best, ranking.bestRaw), 0),
  };
}
