import type { IdentificationCandidate } from "./operations";

/** 1:N answers' order: best score first, ties by pet id so the order is deterministic. */
export function sortCandidates(candidates: IdentificationCandidate[]): IdentificationCandidate[] {
  return candidates.sort((a, b) => b.score - a.score || a.petId.localeCompare(b.petId));
}
