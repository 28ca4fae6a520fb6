import type { IdentificationCandidate } from "./operations";
import { RERANK_PROMOTED, SHORTLIST_SIZE } from "./parameters";

/** 1:N answers' order: best score first, ties by pet id so the order is deterministic. */
export function sortCandidates(candidates: IdentificationCandidate[]): IdentificationCandidate[] {
  return candidates.sort((a, b) => b.score - a.score || a.petId.localeCompare(b.petId));
}

/** A pet's raw session similarity under the light comparison. */
export interface LightScore {
  petId: string;
  raw: number;
}

/**
 * The pets to match in full: the first stage's SHORTLIST_SIZE best (`ranked`, best first), then the RERANK_PROMOTED
 * best of the others by light similarity (`light`; none that the light comparison found nothing in).
 */
export function petsToCompare(ranked: readonly string[], light: readonly LightScore[]): string[] {
  const head = ranked.slice(0, SHORTLIST_SIZE);
  const promoted = light
    .filter((score) => score.raw > 0 && !head.includes(score.petId))
    .sort((a, b) => b.raw - a.raw || (a.petId < b.petId ? -1 : a.petId > b.petId ? 1 : 0))
    .slice(0, RERANK_PROMOTED)
    .map((score) => score.petId);
  return [...head, ...promoted];
}
