import type { CandidateRanking } from "./cascade";
import type { IdentificationCandidate } from "./operations";
import { RERANK_PROMOTED } from "./parameters";
import { DECISION_THRESHOLD, sessionScore } from "./scoring";

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
 * The cascade's promotion: the RERANK_PROMOTED best of the lightly compared pets (`light`; none that the light
 * comparison found nothing in), which join the full matching. Each pass of the cascade promotes its own: the fast
 * pass among the first stage's SHORTLIST_SIZE best, the deep pass among all lightly compared pets not matched yet.
 */
export function promoteByLightScore(light: readonly LightScore[]): string[] {
  return [...light]
    .filter((score) => score.raw > 0)
    .sort((a, b) => b.raw - a.raw || (a.petId < b.petId ? -1 : a.petId > b.petId ? 1 : 0))
    .slice(0, RERANK_PROMOTED)
    .map((score) => score.petId);
}

/**
 * Whether to compare the candidates beyond the first stage's SHORTLIST_SIZE best: only when the fast pass's full
 * matching accepted nobody. A pet found there is what the search is for (and what almost every genuine probe gets),
 * so it pays no deep pass; an unknown animal, or a pet the first stage ranked low, does.
 */
export function rerankNeeded(accepted: number): boolean {
  return accepted === 0;
}

/** Pets matched in full (each with its session's raw similarity) as a ranking: those at or above the decision threshold, best first. */
export function rankSessions(sessions: readonly { petId: string; raw: number }[]): CandidateRanking {
  const candidates: IdentificationCandidate[] = [];
  for (const { petId, raw } of sessions) {
    const score = sessionScore(raw);
    if (score >= DECISION_THRESHOLD) candidates.push({ petId, score });
  }
  return { candidates: sortCandidates(candidates), compared: sessions.length, bestRaw: sessions.reduce((best, { raw }) => Math.max(best, raw), 0) };
}
