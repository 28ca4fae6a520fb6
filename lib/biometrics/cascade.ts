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
 */
export async function runCascade(stages: CascadeStages): Promise<IdentificationOutcome> {
  const fast = await stages.shortlist(SHORTLIST_SIZE, MATCHED_SETS);
  const fastLight = await compareLightly(stages, fast.petIds);
  const fastPromoted = [...new Set([...promoteByLightScore(fastLight), ...fast.petIds.slice(0, FIRST_STAGE_PROMOTED)])];
  const head = await stages.rank(fastPromoted);
  const details = { searched: fast.searched, shortlisted: fast.petIds.length, reranked: fastLight.length, compared: head.compared, bestRaw: head.bestRaw };
  if (!rerankNeeded(head.candidates.length)) return { candidates: sortCandidates(head.candidates), details };
  const seen = new Set(fast.petIds);
  const rest = (await stages.shortlist(RERANK_CANDIDATES, DESCRIPTOR_SETS)).petIds.filter((petId) => !seen.has(petId));
  const light = await compareLightly(stages, rest);
  const matched = new Set(fastPromoted);
  const promoted = await stages.rank(promoteByLightScore([...fastLight.filter((score) => !matched.has(score.petId)), ...light]));
  return {
    candidates: sortCandidates([...head.candidates, ...promoted.candidates]),
    details: {
      ...details,
      shortlisted: fast.petIds.length + rest.length,
      reranked: fastLight.length + light.length,
      compared: head.compared + promoted.compared,
      bestRaw: Math.max(head.bestRaw, promoted.bestRaw),
    },
  };
}

function compareLightly(stages: CascadeStages, petIds: string[]): Promise<LightScore[]> {
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
