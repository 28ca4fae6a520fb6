/**
 * The nose-print engine's public interface. Every heavy call runs in a worker-thread pool sized to the
 * cores; the calling thread (e.g. the web server) only posts bytes and awaits the result.
 */
import { EnginePool } from "./engine-pool";
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
export { templateVersionOf } from "./template";

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

/** 1:N: the pets at or above the decision threshold, best first. */
export function identifyPet(probe: Uint8Array[], gallery: GalleryPet[]): Promise<IdentificationOutcome> {
  return enginePool().run("identifyPet", probe, gallery);
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
