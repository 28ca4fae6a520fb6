import { extractNoseImage, type ExtractionOptions } from "./extract";
import { compareTemplates, WHOLE_FRAME_HYPOTHESES } from "./pair-matcher";
import { sortCandidates, type LightScore } from "./candidates";
import { runCascade, type CandidateRanking } from "./cascade";
import { Gallery } from "./gallery";
import { RERANK_KEYPOINTS } from "./parameters";
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
   * ones); reranked: pets compared lightly (the fast pass's shortlist, and a deep pass's new ones); compared: matched in full.
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
 * the cascade (`runCascade`, as `identifyInGallery` runs it) in this thread.
 */
export async function identifyAmong(probes: NoseTemplate[][], pets: { petId: string; templates: NoseTemplate[] }[]): Promise<IdentificationOutcome[]> {
  const gallery = new Gallery();
  const byId = new Map(pets.map((pet) => [pet.petId, pet.templates]));
  const withTemplates = (petIds: readonly string[]) => petIds.map((petId) => ({ petId, templates: byId.get(petId) ?? [] }));
  try {
    for (const pet of pets) gallery.upsert(pet.petId, pet.templates.map((t) => t.searchKey));
    const outcomes: IdentificationOutcome[] = [];
    for (const [n, probe] of probes.entries()) {
      outcomes.push(
        await runCascade({
          shortlist: async (limit, sets) => gallery.shortlist(probe, limit, sets, `probe-${n}`),
          rank: async (petIds) => rankCandidates(probe, withTemplates(petIds)),
          compareLightly: async (petIds) => lightRawScores(probe, withTemplates(petIds)),
        }),
      );
    }
    return outcomes;
  } finally {
    gallery.dispose();
  }
}

/**
 * The cascade's light comparison: the matcher under the whole-frame hypotheses (WHOLE_FRAME_HYPOTHESES) on each image's
 * RERANK_KEYPOINTS strongest keypoints.
 */
export function lightRawScores(probe: readonly NoseTemplate[], pets: readonly { petId: string; templates: readonly NoseTemplate[] }[]): LightScore[] {
  const lightProbe = probe.map((t) => strongestKeypoints(t, RERANK_KEYPOINTS));
  return pets
    .filter((pet) => pet.templates.length > 0)
    .map(({ petId, templates }) => ({ petId, raw: compareSessions(lightProbe, templates.map((t) => strongestKeypoints(t, RERANK_KEYPOINTS)), WHOLE_FRAME_HYPOTHESES).raw }));
}

/** lightRawScores on serialised templates: one share of the candidates, run in a pool worker. */
export function rerankCandidates(probe: Uint8Array[], pets: GalleryPet[]): LightScore[] {
  return lightRawScores(
    probe.map(deserializeTemplate),
    pets.map((pet) => ({ petId: pet.petId, templates: pet.templates.map(deserializeTemplate) })),
  );
}

/** Full matching of shortlisted pets: those at or above the decision threshold, best first. */
export function rankCandidates(probe: readonly NoseTemplate[], pets: readonly { petId: string; templates: readonly NoseTemplate[] }[]): CandidateRanking {
  let bestRaw = 0;
  let compared = 0;
  const candidates: IdentificationCandidate[] = [];
  for (const { petId, templates } of pets) {
    if (templates.length === 0) continue;
    compared++;
    const { raw } = compareSessions(probe, templates);
    bestRaw = Math.max(bestRaw, raw);
    const score = sessionScore(raw);
    if (score >= DECISION_THRESHOLD) candidates.push({ petId, score });
  }
  return { candidates: sortCandidates(candidates), compared, bestRaw };
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
