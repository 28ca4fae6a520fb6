/**
 * The engine's door: the product reaches the nose-print engine (lib/biometrics) through this module
 * only (lib/layers.test.ts), so a call from an upload, a job or the dashboard can be followed straight
 * into lib/biometrics/index.ts. Behind it, every heavy call runs on the engine's worker-thread pool
 * (lib/biometrics/engine-pool.ts); a build's server runs the worker compiled at build time
 * (scripts/build-engine.mjs), never TypeScript.
 */
import * as biometrics from "@/lib/biometrics";
import { processWide } from "@/lib/process-state";

/** The engine's whole interface, for code that takes an engine as a parameter. */
export type Engine = typeof biometrics;

// One engine per process. Next compiles this module into more than one bundle (the start-up's, the
// pages' and server actions'), each with its own copy of lib/biometrics; the first copy loaded serves
// them all, so the process has one worker pool and one set of 1:N galleries.
const engine: Engine = processWide("engine", () => biometrics);

// The calls that reach the worker pool, from the process's one engine. Everything else the engine
// exports (constants, pure functions, types) is the same in every copy and comes through `export *`,
// which these names override.
export const {
  analyseImage,
  verifyPet,
  scoreImagePair,
  galleryUpsertPets,
  galleryBatchWriter,
  galleryUpsertPet,
  galleryRemovePet,
  galleryDrop,
  gallerySave,
  galleryRestore,
  galleryTotals,
  galleryStats,
  identifyInGallery,
  engineLoad,
  engineThreads,
  shutdownEngine,
} = engine;
export * from "@/lib/biometrics";

/** The file the engine's worker threads run; throws when a build's compiled engine is missing (readiness checks it). */
export { workerEntryPath as engineWorkerFile } from "@/lib/biometrics/engine-pool";
