/**
 * The nose-print engine's public interface. Every heavy call runs in a worker-thread pool sized to the
 * cores; the calling thread (e.g. the web server) only posts bytes and awaits the result.
 */
import { EnginePool, EngineTaskError } from "./engine-pool";
import { sortCandidates } from "./candidates";
import { GalleryNotLoadedError } from "./gallery-not-loaded";
import type { GalleryPet, IdentificationOutcome, ImageAnalysis, VerificationOutcome } from "./operations";

export { isJpeg } from "./decode";
export type { ImageRejectionCode } from "./image-rejection";
export type { QualityReport, QualityFigures, QualityReason } from "./quality";
export type { GalleryPet, IdentificationOutcome, IdentificationCandidate, ImageAnalysis, VerificationOutcome } from "./operations";
export {
  TEMPLATE_VERSION as ENGINE_VERSION,
  MIN_ENROL_IMAGES,
  MIN_PROBE_IMAGES,
  MIN_USABLE_ENROL_IMAGES,
  MIN_USABLE_PROBE_IMAGES,
  QUALITY_USABLE_THRESHOLD,
} from "./parameters";
export { explainQualityFailure, type FailureExplanation } from "./failure-advice";
export { DECISION_THRESHOLD } from "./scoring";
export { GalleryNotLoadedError } from "./gallery-not-loaded";
export { searchKeyOfTemplate, templateVersionOf } from "./template";

let pool: EnginePool | null = null;

function enginePool(): EnginePool {
  pool ??= new EnginePool();
  return pool;
}

/** Decode, check and measure one upload; a usable image also yields its template bytes. */
export function analyseImage(jpeg: Uint8Array): Promise<ImageAnalysis> {
  return enginePool().run("analyseImage", jpeg);
}

/** 1:1: a probe set (≥ 3 templates) against a pet's enrolled set (≥ 5). */
export function verifyPet(probe: Uint8Array[], enrolled: Uint8Array[]): Promise<VerificationOutcome> {
  return enginePool().run("verifyPet", probe, enrolled);
}

/*
 * 1:N galleries: one per account (or search pool and species), held inside one engine worker thread
 * (chosen by the key) so searching never runs on the caller's event loop. A gallery keeps only the
 * compact first-stage data; full templates of the shortlist come from the caller (e.g. the database).
 * A worker that crashes is replaced empty: galleryStats then says loaded: false (or fewer pets than the
 * caller added) and identifyInGallery throws GalleryNotLoadedError; the caller reloads.
 */

/**
 * Adds a pet to a gallery (creating the gallery), or replaces its images; no images removes it. Each
 * image is its whole template or, cheaper to store and load, `searchKeyOfTemplate(template)`.
 */
export function galleryUpsertPet(galleryKey: string, petId: string, templates: Uint8Array[]): Promise<void> {
  return enginePool().runSticky(galleryKey, "galleryUpsertPet", galleryKey, petId, templates);
}

/** Removes a pet from a gallery; resolves whether it was there. */
export function galleryRemovePet(galleryKey: string, petId: string): Promise<boolean> {
  return enginePool().runSticky(galleryKey, "galleryRemovePet", galleryKey, petId);
}

export function galleryDrop(galleryKey: string): Promise<void> {
  return enginePool().runSticky(galleryKey, "galleryDrop", galleryKey);
}

/** Whether the gallery is loaded, its pets, and the bytes its first stage holds. */
export function galleryStats(galleryKey: string): Promise<{ loaded: boolean; pets: number; bytes: number }> {
  return enginePool().runSticky(galleryKey, "galleryStats", galleryKey);
}

/**
 * 1:N in a gallery: the first stage shortlists in the gallery's worker, `loadTemplates` supplies the
 * shortlisted pets' full templates, and full matching is shared out over the pool. Pets that
 * loadTemplates leaves out (deleted meanwhile) are skipped.
 */
export async function identifyInGallery(
  galleryKey: string,
  probe: Uint8Array[],
  loadTemplates: (petIds: string[]) => Promise<GalleryPet[]>,
): Promise<IdentificationOutcome> {
  const engine = enginePool();
  const shortlist = await engine.runSticky(galleryKey, "galleryShortlist", galleryKey, probe).catch((error: unknown) => {
    if (error instanceof EngineTaskError && error.message.startsWith(GalleryNotLoadedError.errorName)) throw new GalleryNotLoadedError(galleryKey);
    throw error;
  });
  const pets = shortlist.petIds.length > 0 ? await loadTemplates(shortlist.petIds) : [];
  const shares = Array.from({ length: Math.min(engine.size, pets.length) }, (_, i) => pets.filter((_, j) => j % engine.size === i));
  const rankings = await Promise.all(shares.map((share) => engine.run("rankShortlist", probe, share)));
  return {
    candidates: sortCandidates(rankings.flatMap((ranking) => ranking.candidates)),
    details: {
      searched: shortlist.searched,
      shortlisted: shortlist.petIds.length,
      compared: pets.length,
      bestRaw: rankings.reduce((best, ranking) => Math.max(best, ranking.bestRaw), 0),
    },
  };
}

/** Single-image 1:1 score 0–100. */
export function scoreImagePair(a: Uint8Array, b: Uint8Array): Promise<number> {
  return enginePool().run("scoreImagePair", a, b);
}

export async function shutdownEngine(): Promise<void> {
  const current = pool;
  pool = null;
  await current?.shutdown();
}
