import { extractNoseImage } from "./extract";
import { compareTemplates } from "./pair-matcher";
import { COARSE_SHORTLIST_SIZE, DESCRIPTOR_DIMS, LIGHT_MATCH_KEYPOINTS, SHORTLIST_SIZE } from "./parameters";
import { SearchIndex } from "./search-index";
import { combineSearchVectors } from "./search-vector";
import { DECISION_THRESHOLD, pairScore, sessionScore } from "./scoring";
import { compareSessions } from "./session-matcher";
import { deserializeTemplate, serializeTemplate, type NoseTemplate } from "./template";
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
  details: { raw: number; inliers: number[][]; tentative: number[][] };
}

export interface IdentificationCandidate {
  petId: string;
  score: number;
}

export interface IdentificationOutcome {
  candidates: IdentificationCandidate[];
  /** searched: pets in the gallery; shortlisted: pets past the first stage; compared: matched in full. */
  details: { searched: number; shortlisted: number; compared: number; bestRaw: number };
}

export interface GalleryPet {
  petId: string;
  templates: Uint8Array[];
}

export async function analyseImage(jpeg: Uint8Array): Promise<ImageAnalysis> {
  const result = await extractNoseImage(jpeg);
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
      inliers: comparison.pairs.map((row) => row.map((pair) => pair.inliers)),
      tentative: comparison.pairs.map((row) => row.map((pair) => pair.tentative)),
    },
  };
}

export function identifyPet(probe: Uint8Array[], gallery: GalleryPet[]): IdentificationOutcome {
  return identifyAmong(
    probe.map(deserializeTemplate),
    gallery.map((pet) => ({ petId: pet.petId, templates: pet.templates.map(deserializeTemplate) })),
  );
}

/** 1:N on decoded templates: the cascade of identifyWithIndex over the given gallery. */
export function identifyAmong(probe: NoseTemplate[], gallery: { petId: string; templates: NoseTemplate[] }[]): IdentificationOutcome {
  const index = new SearchIndex();
  const byId = new Map(gallery.map((pet) => [pet.petId, pet.templates]));
  for (const pet of gallery) {
    if (pet.templates.length > 0) index.upsert(pet.petId, combineSearchVectors(pet.templates.map((t) => t.searchVector)));
  }
  return identifyWithIndex(probe, index, (petId) => byId.get(petId) ?? []);
}

/** The same template cut to its strongest keypoints (templates store keypoints strongest first). */
function strongestKeypoints(template: NoseTemplate, count: number): NoseTemplate {
  const kept = Math.min(count, template.keypoints.length / 4);
  return { ...template, keypoints: template.keypoints.subarray(0, kept * 4), descriptors: template.descriptors.subarray(0, kept * DESCRIPTOR_DIMS) };
}

/** 1:N against a prepared index; `templatesOf` supplies full templates of the pets that reach matching. */
export function identifyWithIndex(
  probe: NoseTemplate[],
  index: SearchIndex,
  templatesOf: (petId: string) => NoseTemplate[],
): IdentificationOutcome {
  const coarse = index.search(combineSearchVectors(probe.map((t) => t.searchVector)), COARSE_SHORTLIST_SIZE);
  const lightProbe = probe.map((t) => strongestKeypoints(t, LIGHT_MATCH_KEYPOINTS));
  const shortlist = coarse
    .map(({ petId }) => ({
      petId,
      light: compareSessions(lightProbe, templatesOf(petId).map((t) => strongestKeypoints(t, LIGHT_MATCH_KEYPOINTS))).raw,
    }))
    .sort((a, b) => b.light - a.light || a.petId.localeCompare(b.petId))
    .slice(0, SHORTLIST_SIZE);
  const ranking = rankCandidates(probe, shortlist.map(({ petId }) => ({ petId, templates: templatesOf(petId) })));
  return { candidates: ranking.candidates, details: { searched: index.size, shortlisted: coarse.length, compared: shortlist.length, bestRaw: ranking.bestRaw } };
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

export function sortCandidates(candidates: IdentificationCandidate[]): IdentificationCandidate[] {
  return candidates.sort((a, b) => b.score - a.score || a.petId.localeCompare(b.petId));
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
  return pairScore(compareTemplates(deserializeTemplate(a), deserializeTemplate(b)).inliers);
}
