import { promoteByLightScore, rerankNeeded, sortCandidates, type LightScore } from "./candidates";
import type { GalleryShortlist } from "./gallery-shortlist";
import { DESCRIPTOR_SETS, FIRST_STAGE_PROMOTED, MATCHED_SETS, RERANK_CANDIDATES, SHORTLIST_SIZE } from "./parameters";
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
  /** The light comparison of these pets (`lightRawScores`). */
  compareLightly(petIds: string[]): Promise<LightScore[]>;
  /**
   * The stages of the probe's quarter-turned views (decision 0029), made only when the passes upright accepted nobody;
   * null when the probe cannot be turned (no JPEGs). Their shortlist and light comparison read the views, their full
   * matching is the verification's: upright, then each probe image at its most promising turn.
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
 *   and the best of all lightly compared pets not matched in full yet are.
 * - Turned pass, only when the deep one accepted nobody too and the stages can turn the probe (`turned`): the fast
 *   pass again on the probe's quarter-turned views, for a nose photographed at any roll.
 */
export async function runCascade(stages: CascadeStages): Promise<IdentificationOutcome> {
  const observe = stages.observe ?? (() => {});
  const { fastLight, fastPromoted, head, shortlisted } = await fastPass(stages, "fast", observe);
  const details = { searched: shortlisted.searched, shortlisted: shortlisted.petIds.length, reranked: fastLight.length, compared: head.compared, bestRaw: head.bestRaw };
  if (!rerankNeeded(head.candidates.length)) return { candidates: sortCandidates(head.candidates), details };
  const seen = new Set(shortlisted.petIds);
  observe("deep", "first stage");
  const rest = (await stages.shortlist(RERANK_CANDIDATES, DESCRIPTOR_SETS)).petIds.filter((petId) => !seen.has(petId));
  observe("deep", "light");
  const light = await compareLightly(stages, rest);
  const matched = new Set(fastPromoted);
  observe("deep", "full");
  const promoted = await stages.rank(promoteByLightScore([...fastLight.filter((score) => !matched.has(score.petId)), ...light]));
  const deep = {
    candidates: sortCandidates([...head.candidates, ...promoted.candidates]),
    details: {
      ...details,
      shortlisted: shortlisted.petIds.length + rest.length,
      reranked: fastLight.length + light.length,
      compared: head.compared + promoted.compared,
      bestRaw: Math.max(head.bestRaw, promoted.bestRaw),
    },
  };
  if (!rerankNeeded(deep.candidates.length) || !stages.turned) return deep;
  observe("turned", "views");
  const turnedStages = await stages.turned();
  if (!turnedStages) return deep;
  const turned = await fastPass(turnedStages, "turned", observe);
  return {
    candidates: sortCandidates(turned.head.candidates),
    details: {
      ...deep.details,
      shortlisted: deep.details.shortlisted + turned.shortlisted.petIds.length,
      reranked: deep.details.reranked + turned.fastLight.length,
      compared: deep.details.compared + turned.head.compared,
      bestRaw: Math.max(deep.details.bestRaw, turned.head.bestRaw),
    },
  };
}

/** The fast pass: the first stage's SHORTLIST_SIZE best by the matched frames, compared lightly, the best matched in full. */
async function fastPass(stages: Omit<CascadeStages, "turned">, pass: CascadePass, observe: NonNullable<CascadeStages["observe"]>) {
  observe(pass, "first stage");
  const shortlisted = await stages.shortlist(SHORTLIST_SIZE, MATCHED_SETS);
  observe(pass, "light");
  const fastLight = await compareLightly(stages, shortlisted.petIds);
  const fastPromoted = [...new Set([...promoteByLightScore(fastLight), ...shortlisted.petIds.slice(0, FIRST_STAGE_PROMOTED)])];
  observe(pass, "full");
  const head = await stages.rank(fastPromoted);
  return { shortlisted, fastLight, fastPromoted, head };
}

function compareLightly(stages: Omit<CascadeStages, "turned">, petIds: string[]): Promise<LightScore[]> {
  return petIds.length > 0 ? stages.compareLightly(petIds) : Promise.resolve([]);
}

/** Joins the full matching of several shares of the pets. */
export function joinRankings(rankings: readonly CandidateRanking[]): CandidateRanking {
  return {
    candidates: sortCandidates(rankings.flatMap((ranking) => ranking.candidates)),
    compared: rankings.reduce((sum, ranking) => sum + ranking.compared, 0),
    bestRaw: rankings.reduce((best, ranking) => Math.max(best, ranking.bestRaw), 0),
  };
}
