import { extractNoseImage, type ExtractionOptions } from "./extract";
import { compareTemplates } from "./pair-matcher";
import { promoteByLightScore, rerankNeeded, sortCandidates, type LightScore } from "./candidates";
import { Gallery } from "./gallery";
import { DESCRIPTOR_SETS, MATCHED_SETS, RERANK_CANDIDATES, RERANK_KEYPOINTS, SHORTLIST_SIZE } from "./parameters";
import { DECISION_THRESHOLD, pairScore, sessionScore } from "./scoring";
import { compareSessions } from "./session-matcher";
import { deserializeTemplate, serializeTemplate, strongestKeypoints, type NoseTemplate } from "./template";
import type { ImageRejectionCode } from "./image-rejection";
import type { QualityReport } from "./quality";

/**
 * The engine's operations on serialised templates: what the worker threads run. Inputs and outputs are
 * plain data (bytes, numbers), so they cross thread boundaries without copying objects.
 */
export type ImageAnalysis =
  | { ok: true; quality: QualityReport; template: Uint8Array | null; extractionMs: number }
  | { ok: false; rejection: { code: ImageRejectionCode; message: string } };

export interface VerificationOutcome {
  score: number;
  isVerified: boolean;
  details: { raw: number; similarity: number[][]; inliers: number[][]; tentative: number[][] };
}

export interface IdentificationCandidate {
  petId: string;
  score: number;
}

export interface IdentificationOutcome {
  candidates: IdentificationCandidate[];
  /**
   * searched: pets in the gallery; shortlisted: pets past the first stage (the fast pass's, and a deep pass's new
   * ones); reranked: pets compared lightly in a deep pass; compared: matched in full.
   */
  details: { searched: number; shortlisted: number; reranked: number; compared: number; bestRaw: number };
}

export interface GalleryPet {
  petId: string;
  templates: Uint8Array[];
}

export async function analyseImage(jpeg: Uint8Array, options: ExtractionOptions = {}): Promise<ImageAnalysis> {
  const result = await extractNoseImage(jpeg, options);
  if (!result.ok) return result;
  return {
    ok: true,
    quality: result.quality,
    template: result.template ? serializeTemplate(result.template) : null,
    extractionMs: result.timings.decodeMs + result.timings.featuresMs,
  };
}

export function verifyPet(probe: Uint8Array[], enrolled: Uint8Array[]): VerificationOutcome {
  const comparison = compareSessions(probe.map(deserializeTemplate), enrolled.map(deserializeTemplate));
  const score = sessionScore(comparison.raw);
  return {
    score,
    isVerified: score >= DECISION_THRESHOLD,
    details: {
      raw: comparison.raw,
      similarity: comparison.pairs.map((row) => row.map((pair) => pair.similarity)),
      inliers: comparison.pairs.map((row) => row.map((pair) => pair.inliers)),
      tentative: comparison.pairs.map((row) => row.map((pair) => pair.tentative)),
    },
  };
}

/**
 * 1:N of each probe set among decoded templates (the evaluation's path): one gallery built for all probes, then
 * the cascade of `identifyInGallery` in this thread.
 */
export function identifyAmong(probes: NoseTemplate[][], pets: { petId: string; templates: NoseTemplate[] }[]): IdentificationOutcome[] {
  const gallery = new Gallery();
  const byId = new Map(pets.map((pet) => [pet.petId, pet.templates]));
  const withTemplates = (petIds: readonly string[]) => petIds.map((petId) => ({ petId, templates: byId.get(petId) ?? [] }));
  try {
    for (const pet of pets) gallery.upsert(pet.petId, pet.templates.map((t) => t.searchKey));
    return probes.map((probe) => {
      const fast = gallery.shortlist(probe, SHORTLIST_SIZE, MATCHED_SETS);
      const head = rankCandidates(probe, withTemplates(fast.petIds));
      const details = { searched: fast.searched, shortlisted: fast.petIds.length, reranked: 0, compared: fast.petIds.length, bestRaw: head.bestRaw };
      if (!rerankNeeded(head.candidates.length)) return { candidates: head.candidates, details };
      const seen = new Set(fast.petIds);
      const rest = gallery.shortlist(probe, RERANK_CANDIDATES, DESCRIPTOR_SETS).petIds.filter((petId) => !seen.has(petId));
      const light = lightRawScores(probe, withTemplates(rest));
      const promotedIds = promoteByLightScore(light);
      const promoted = rankCandidates(probe, withTemplates(promotedIds));
      return {
        candidates: sortCandidates([...head.candidates, ...promoted.candidates]),
        details: {
          ...details,
          shortlisted: fast.petIds.length + rest.length,
          reranked: light.length,
          compared: fast.petIds.length + promotedIds.length,
          bestRaw: Math.max(head.bestRaw, promoted.bestRaw),
        },
      };
    });
  } finally {
    gallery.dispose();
  }
}

/** The cascade's light comparison: the full matcher on each image's RERANK_KEYPOINTS strongest keypoints. */
export function lightRawScores(probe: readonly NoseTemplate[], pets: readonly { petId: string; templates: readonly NoseTemplate[] }[]): LightScore[] {
  const lightProbe = probe.map((t) => strongestKeypoints(t, RERANK_KEYPOINTS));
  return pets
    .filter((pet) => pet.templates.length > 0)
    .map(({ petId, templates }) => ({ petId, raw: compareSessions(lightProbe, templates.map((t) => strongestKeypoints(t, RERANK_KEYPOINTS))).raw }));
}

/** lightRawScores on serialised templates: one share of the candidates, run in a pool worker. */
export function rerankCandidates(probe: Uint8Array[], pets: GalleryPet[]): LightScore[] {
  return lightRawScores(
    probe.map(deserializeTemplate),
    pets.map((pet) => ({ petId: pet.petId, templates: pet.templates.map(deserializeTemplate) })),
  );
}

export interface CandidateRanking {
  candidates: IdentificationCandidate[];
  bestRaw: number;
}

/** Full matching of shortlisted pets: those at or above the decision threshold, best first. */
export function rankCandidates(probe: readonly NoseTemplate[], pets: readonly { petId: string; templates: readonly NoseTemplate[] }[]): CandidateRanking {
  let bestRaw = 0;
  const candidates: IdentificationCandidate[] = [];
  for (const { petId, templates } of pets) {
    if (templates.length === 0) continue;
    const { raw } = compareSessions(probe, templates);
    bestRaw = Math.max(bestRaw, raw);
    const score = sessionScore(raw);
    if (score >= DECISION_THRESHOLD) candidates.push({ petId, score });
  }
  return { candidates: sortCandidates(candidates), bestRaw };
}

/** rankCandidates on serialised templates: one share of a shortlist, run in a pool worker. */
export function rankShortlist(probe: Uint8Array[], pets: GalleryPet[]): CandidateRanking {
  return rankCandidates(
    probe.map(deserializeTemplate),
    pets.map((pet) => ({ petId: pet.petId, templates: pet.templates.map(deserializeTemplate) })),
  );
}

/** Single-image 1:1 score, used by the evaluation's pair protocol. */
export function scoreImagePair(a: Uint8Array, b: Uint8Array): number {
  return pairScore(compareTemplates(deserializeTemplate(a), deserializeTemplate(b)).similarity);
}
