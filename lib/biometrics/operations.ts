import { extractNoseImage, type ExtractionOptions } from "./extract";
import { compareTemplates, WHOLE_FRAME_HYPOTHESES } from "./pair-matcher";
import { rankSessions, type LightScore } from "./candidates";
import { runCascade, turnedPassImages, type CandidateRanking } from "./cascade";
import { Gallery } from "./gallery";
import { RERANK_KEYPOINTS } from "./parameters";
import { DECISION_THRESHOLD, pairScore, sessionScore, triesQuarterTurns } from "./scoring";
import { compareSessions, turnedRow, withQuarterTurns, type SessionComparison, type TurnableProbe } from "./session-matcher";
import { QUARTER_TURNS, quarterTurnViews, TurnableImage, turnableFromViews } from "./turns";
import { deserializeTemplate, joinTemplates, serializeTemplate, strongestKeypoints, type NoseTemplate } from "./template";
import type { ImageRejectionCode } from "./image-rejection";
import type { QualityReport } from "./quality";

/**
 * The engine's operations on serialised templates: what the worker threads run. Inputs and outputs are
 * plain data (bytes, numbers), so they cross thread boundaries without copying objects.
 */
export type ImageAnalysis =
  | {
      ok: true;
      quality: QualityReport;
      template: Uint8Array | null;
      /** With `turnedViews` asked (ExtractionOptions): the template's quarter-turned views, joined (`joinTemplates`); else null. */
      turnedViews: Uint8Array | null;
      extractionMs: number;
    }
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

/**
 * How a 1:N probe image is turned for the cascade's turned pass: the quarter-turned views its upload made (`views`,
 * `analyseImage` with `turnedViews`, decision 0042), or its JPEG to make them from (an image uploaded before).
 */
export interface ProbeTurns {
  views?: Uint8Array | null;
  jpeg?: Uint8Array;
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
    turnedViews: result.turnedViews ? joinTemplates(result.turnedViews.map(serializeTemplate)) : null,
    extractionMs: result.timings.decodeMs + result.timings.featuresMs + result.timings.turnedViewsMs,
  };
}

/**
 * 1:1: a probe set against a pet's enrolled set. With the probe images' JPEGs (`probeImages[p]` for `probe[p]`), a
 * session the upright comparison does not accept is compared again with each probe image at its most promising
 * quarter turn (`compareSessionsTurning`).
 */
export async function verifyPet(probe: Uint8Array[], enrolled: Uint8Array[], probeImages?: Uint8Array[]): Promise<VerificationOutcome> {
  const comparison = await compareSessionsTurning(probe.map(deserializeTemplate), enrolled.map(deserializeTemplate), probeImages);
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
 * compareSessions, then, when its score is under the decision threshold and the probe images' JPEGs are given, each
 * probe image also tried at its most promising quarter turn (`withQuarterTurns`, decision 0029): a nose photographed
 * at any roll. A session accepted upright pays nothing more.
 */
export async function compareSessionsTurning(
  probe: NoseTemplate[],
  enrolled: NoseTemplate[],
  probeImages?: Uint8Array[],
): Promise<SessionComparison> {
  const upright = compareSessions(probe, enrolled);
  if (!probeImages || !triesQuarterTurns(upright.raw)) return upright;
  const turnable = await Promise.all(probe.map((template, p) => (probeImages[p] ? TurnableImage.of(probeImages[p], template) : null)));
  return withQuarterTurns(upright, enrolled, turnable, QUARTER_TURNS);
}

/** compareSessionsTurning with the probe images' turns at hand (`turnable[p]` for `probe[p]`, null: upright only). */
function compareSessionsWithTurns(probe: readonly NoseTemplate[], enrolled: readonly NoseTemplate[], turnable: readonly (TurnableProbe | null)[]): SessionComparison {
  const upright = compareSessions(probe, enrolled);
  return triesQuarterTurns(upright.raw) ? withQuarterTurns(upright, enrolled, turnable, QUARTER_TURNS) : upright;
}

/**
 * 1:N of each probe set among decoded templates (the evaluation's path): one gallery built for all probes, then
 * the cascade (`runCascade`, as `identifyInGallery` runs it) in this thread. `turnedViews(n)`, when given, makes probe
 * n's images' quarter-turned views (`quarterTurnViews`; null: that image is not turned), for its turned pass only.
 */
export async function identifyAmong(
  probes: NoseTemplate[][],
  pets: { petId: string; templates: NoseTemplate[] }[],
  turnedViews?: (probe: number) => Promise<(NoseTemplate[] | null)[]>,
): Promise<IdentificationOutcome[]> {
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
          turned: async () => {
            const views = turnedViews ? await turnedViews(n) : [];
            const picked = turnedPassImages(probe.map((t) => t.quality), probe.map((_, p) => (views[p]?.length ?? 0) > 0)).flatMap((p) => views[p] ?? []);
            if (picked.length === 0) return null;
            const turnable = views.map((v) => (v ? turnableFromViews(v) : null));
            return {
              shortlist: async (limit, sets) => gallery.shortlist(picked, limit, sets),
              rank: async (petIds) => rankCandidates(probe, withTemplates(petIds), turnable),
              compareLightly: async (petIds) => lightRawScores(picked, withTemplates(petIds)),
            };
          },
        }),
      );
    }
    return outcomes;
  } finally {
    gallery.dispose();
  }
}

/**
 * A probe image's quarter-turned views (`quarterTurnViews`), serialised; none when its JPEG does not give its template
 * back. A 1:N search makes them once per probe image, only for its turned pass.
 */
export async function turnProbeImage(template: Uint8Array, jpeg: Uint8Array): Promise<Uint8Array[]> {
  return ((await quarterTurnViews(jpeg, deserializeTemplate(template))) ?? []).map(serializeTemplate);
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

/**
 * Full matching of shortlisted pets: those at or above the decision threshold, best first. With `turnable` (the turned
 * pass), each pet's session as a verification compares it: upright, then each probe image at its most promising turn.
 */
export function rankCandidates(
  probe: readonly NoseTemplate[],
  pets: readonly { petId: string; templates: readonly NoseTemplate[] }[],
  turnable?: readonly (TurnableProbe | null)[],
): CandidateRanking {
  return rankSessions(
    pets
      .filter((pet) => pet.templates.length > 0)
      .map(({ petId, templates }) => ({ petId, raw: (turnable ? compareSessionsWithTurns(probe, templates, turnable) : compareSessions(probe, templates)).raw })),
  );
}

/**
 * One share of a full matching spread over the pool by enrolled image (`identifyInGallery`): each enrolled image's upright
 * similarity with every probe image, `similarity[i][p]` for `enrolled[i]`, as compareSessions compares each pair.
 */
export function matchEnrolledImages(probe: Uint8Array[], enrolled: Uint8Array[]): number[][] {
  const probeTemplates = probe.map(deserializeTemplate);
  return enrolled.map((bytes) => {
    const image = deserializeTemplate(bytes);
    return probeTemplates.map((template) => compareTemplates(template, image).similarity);
  });
}

/**
 * One share of the turned pass's full matching spread over the pool by probe image: for each row, probe image `row`
 * (its quarter-turned views, `turnedViews[row]`, serialised) turned against one pet's enrolled images as
 * withQuarterTurns compares it (`turnedRow`); per enrolled image its turned similarity, or null when not matched turned.
 */
export function matchTurnedRows(turnedViews: Uint8Array[][], rows: { row: number; enrolled: Uint8Array[] }[]): (number | null)[][] {
  const turnable = new Map<number, TurnableProbe>();
  return rows.map(({ row, enrolled }) => {
    if (!turnable.has(row)) turnable.set(row, turnableFromViews(turnedViews[row].map(deserializeTemplate)));
    const images = enrolled.map(deserializeTemplate);
    const light = images.map((image) => strongestKeypoints(image, RERANK_KEYPOINTS));
    return turnedRow(turnable.get(row)!, images, light, QUARTER_TURNS).map((pair) => pair?.similarity ?? null);
  });
}

/** A single image pair's raw similarity upright, and as scored (the better of upright and the quarter turns tried). */
export interface ImagePairComparison {
  upright: number;
  similarity: number;
}

/**
 * A single image pair: upright, and when the upright comparison is not accepted and `turnedViewsOfA` can give the first
 * image's quarter-turned views (`quarterTurnViews`), the best of its four quarter turns, each matched in full against
 * the second image (decision 0032). A pair accepted upright never asks for the views.
 */
export async function compareImagePair(
  a: NoseTemplate,
  b: NoseTemplate,
  turnedViewsOfA?: () => Promise<readonly NoseTemplate[] | null>,
): Promise<ImagePairComparison> {
  const upright = compareTemplates(a, b).similarity;
  if (!turnedViewsOfA || !triesQuarterTurns(upright, pairScore)) return { upright, similarity: upright };
  const views = (await turnedViewsOfA()) ?? [];
  return { upright, similarity: Math.max(upright, ...views.map((view) => compareTemplates(view, b).similarity)) };
}

/**
 * Single-image 1:1 score 0–100, used by the evaluation's pair protocol: with the first image's JPEG, a pair the upright
 * comparison does not accept is tried at the first image's quarter turns (`compareImagePair`).
 */
export async function scoreImagePair(a: Uint8Array, b: Uint8Array, jpegOfA?: Uint8Array): Promise<number> {
  const first = deserializeTemplate(a);
  const { similarity } = await compareImagePair(first, deserializeTemplate(b), jpegOfA && (() => quarterTurnViews(jpegOfA, first)));
  return pairScore(similarity);
}
