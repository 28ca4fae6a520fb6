/**
 * The nose-print engine's public interface. Every heavy call runs in a worker-thread pool sized to the
 * cores; the calling thread (e.g. the web server) only posts bytes and awaits the result.
 */
import { EnginePool, EngineTaskError, hashKey, inSharedMemory } from "./engine-pool";
import { mergeShortlists } from "./gallery-shortlist";
import { rankInTurn, runCascade, turnedPassImages, type CandidateRanking, type CascadeStages } from "./cascade";
import { GalleryNotLoadedError } from "./gallery-not-loaded";
import type { ExtractionOptions } from "./extract";
import { packPets, ShardedPetsWriter, splitPackedPets, type PackedPets, type ShardedPets } from "./packed-pets";
import { SnapshotChangedError } from "./snapshot-stream";
import { rankSessions } from "./candidates";
import type { GalleryPet, IdentificationOutcome, ImageAnalysis, ProbeTurns, VerificationOutcome } from "./operations";
import { sessionRawScore, triesQuarterTurns } from "./scoring";
import { TEMPLATE_VERSION } from "./parameters";
import { splitTemplates, TemplateFormatError, templateQualityOf, templateVersionOf } from "./template";
import { QUARTER_TURNS } from "./turns";

export { isJpeg } from "./decode";
export { inSharedMemory } from "./engine-pool";
export type { ImageRejectionCode } from "./image-rejection";
export type { ExtractionOptions } from "./extract";
export type { QualityReport, QualityFigures, QualityReason } from "./quality";
export type { GalleryPet, IdentificationOutcome, IdentificationCandidate, ImageAnalysis, ProbeTurns, VerificationOutcome } from "./operations";
export {
  TEMPLATE_VERSION as ENGINE_VERSION,
  MIN_ENROL_IMAGES,
  MIN_PROBE_IMAGES,
  MIN_USABLE_ENROL_IMAGES,
  MIN_USABLE_PROBE_IMAGES,
  QUALITY_USABLE_THRESHOLD,
} from "./parameters";
export { explainQualityFailure, type FailureExplanation } from "./failure-advice";
export { DECISION_THRESHOLD, scoreToFmr } from "./scoring";
export { GalleryNotLoadedError } from "./gallery-not-loaded";
export { SnapshotChangedError } from "./snapshot-stream";
export { packedKeys, packedPetCount, packPets, PackedPetsWriter, ShardedPetsWriter, type PackedPets, type ShardedPets } from "./packed-pets";
export { lightTemplateOf, searchKeyOfTemplate, splitTemplates, templateVersionOf } from "./template";

let pool: EnginePool | null = null;

function enginePool(): EnginePool {
  pool ??= new EnginePool();
  return pool;
}

/** The worker pool's load now (zeros before its first task): threads, tasks running and tasks waiting. */
export function engineLoad(): { workers: number; running: number; queued: number } {
  return pool ? { workers: pool.size, running: pool.running, queued: pool.queued } : { workers: 0, running: 0, queued: 0 };
}

/** How many worker threads the engine runs (one per core unless ENGINE_WORKERS says otherwise). */
export function engineThreads(): number {
  return enginePool().size;
}

/**
 * Decode, check and measure one upload; a usable image also yields its template bytes. A 1:N probe's image
 * needs `outerFrames` (ExtractionOptions); any other image is extracted faster without them.
 */
export function analyseImage(jpeg: Uint8Array, options: ExtractionOptions = {}): Promise<ImageAnalysis> {
  return enginePool().run("analyseImage", jpeg, options);
}

/**
 * 1:1: a probe set (≥ 3 templates) against a pet's enrolled set (≥ 5). With the probe images' JPEGs (`probeImages[p]`
 * for `probe[p]`), a probe the upright comparison does not accept is also tried at a quarter turn (a nose photographed
 * at any roll, decision 0029).
 */
export function verifyPet(probe: Uint8Array[], enrolled: Uint8Array[], probeImages?: Uint8Array[]): Promise<VerificationOutcome> {
  return enginePool().run("verifyPet", probe, enrolled, probeImages);
}

/*
 * 1:N galleries: one per account (or search pool and species), sharded over the engine's worker
 * threads by pet id, so that one search runs on every core at once and the gallery's memory is spread
 * over the threads (each holds at most 4 GiB of postings), and searching never runs on the caller's
 * event loop. A gallery keeps only the compact first-stage data; the shortlist's light and full templates come
 * from the caller (e.g. the database). A worker that crashes is replaced empty: galleryStats then says
 * loaded: false and identifyInGallery throws GalleryNotLoadedError; the caller reloads.
 */

/** The slot whose worker holds a pet's shard of every gallery. */
function shardOf(petId: string, engine: EnginePool): number {
  return hashKey(petId) % engine.size;
}

const everySlot = (engine: EnginePool) => Array.from({ length: engine.size }, (_, slot) => slot);

/**
 * Adds pets to a gallery (creating it), or replaces their images; a pet with no images is removed. Each shard's pets
 * are in a buffer of their own (a batch from galleryBatchWriter is written so; a PackedPets batch is copied so), moved
 * (not copied again) to the shard's thread, which indexes them straight from those bytes. Every shard is sent its part
 * (possibly none), so that every shard of a loaded gallery exists.
 */
export async function galleryUpsertPets(galleryKey: string, pets: PackedPets | ShardedPets): Promise<void> {
  const engine = enginePool();
  if ("shards" in pets && pets.shards.length !== engine.size) throw new Error(`a batch dealt to ${pets.shards.length} shards, not ${engine.size}`);
  const shares = "shards" in pets ? pets.shards : splitPackedPets(pets, engine.size, (petId) => shardOf(petId, engine));
  await Promise.all(shares.map((share, slot) => engine.transferToSlot(slot, [share.bytes.buffer as ArrayBuffer], "galleryUpsertPets", galleryKey, share)));
}

/**
 * A writer of one batch for galleryUpsertPets, dealing each pet to its shard as it is written (a gallery load's batch
 * from the database). `expected` gives each pet's packed bytes, where known, to size the shards' buffers.
 */
export function galleryBatchWriter(expected: readonly { petId: string; bytes: number }[]): ShardedPetsWriter {
  const engine = enginePool();
  const sizes = new Array<number>(engine.size).fill(0);
  for (const pet of expected) sizes[shardOf(pet.petId, engine)] += pet.bytes;
  return new ShardedPetsWriter((petId) => shardOf(petId, engine), sizes);
}

/** Adds or replaces one pet; each image is its whole template or, cheaper to store and load, `searchKeyOfTemplate(template)`. */
export function galleryUpsertPet(galleryKey: string, petId: string, templates: Uint8Array[]): Promise<void> {
  return galleryUpsertPets(galleryKey, packPets([{ petId, templates }]));
}

/** Removes a pet from a gallery; resolves whether it was there. */
export function galleryRemovePet(galleryKey: string, petId: string): Promise<boolean> {
  const engine = enginePool();
  return engine.runOnSlot(shardOf(petId, engine), "galleryRemovePet", galleryKey, petId);
}

export async function galleryDrop(galleryKey: string): Promise<void> {
  const engine = enginePool();
  await Promise.all(everySlot(engine).map((slot) => engine.runOnSlot(slot, "galleryDrop", galleryKey)));
}

/** Waits for every shard's task: throws the first failure once all have ended, else sums their pets and bytes. */
async function everyShard(tasks: Promise<{ pets: number; bytes: number }>[]): Promise<{ pets: number; bytes: number }> {
  const settled = await Promise.allSettled(tasks);
  const failed = settled.find((shard) => shard.status === "rejected");
  if (failed) throw failed.reason;
  const shards = settled.map((shard) => (shard as PromiseFulfilledResult<{ pets: number; bytes: number }>).value);
  return { pets: shards.reduce((sum, s) => sum + s.pets, 0), bytes: shards.reduce((sum, s) => sum + s.bytes, 0) };
}

/**
 * Saves every shard of a gallery to a file, shard `slot` (the thread's) to `paths[slot]`: as many paths as engine threads.
 * Each shard is written by its thread to a new file (InvertedIndex.snapshotWriter), a slice a task, so that the
 * thread's other tasks (searches of every gallery it holds) wait for a slice at most, not for the whole shard. Flushing
 * the files to disk and publishing them is the caller's (lib/galleries/gallery-snapshots.ts). Resolves the pets and
 * bytes saved; rejects with SnapshotChangedError when the gallery changed while it was saved.
 */
export async function gallerySave(galleryKey: string, paths: string[]): Promise<{ pets: number; bytes: number }> {
  const engine = enginePool();
  if (paths.length !== engine.size) throw new Error(`a gallery is saved as ${engine.size} shards, not ${paths.length}`);
  const saveShard = async (path: string, slot: number) => {
    for (;;) {
      const slice = await engine.runOnSlot(slot, "gallerySaveSlice", galleryKey, path).catch((error: unknown) => {
        if (error instanceof EngineTaskError && error.message.startsWith(SnapshotChangedError.errorName)) throw new SnapshotChangedError(error.message);
        throw error;
      });
      if (slice.done) return slice;
    }
  };
  // Every shard's task ends (its file closed) before a failure is reported, so the caller may remove the files.
  return everyShard(paths.map(saveShard));
}

/**
 * Replaces a gallery by the shards `gallerySave` wrote (`paths[slot]` for each thread, written by a pool of the same
 * size: pets are dealt to shards by the pool's size). When any shard cannot be read, the whole gallery is dropped and
 * the error thrown. Resolves the pets and bytes restored.
 */
export async function galleryRestore(galleryKey: string, paths: string[]): Promise<{ pets: number; bytes: number }> {
  const engine = enginePool();
  if (paths.length !== engine.size) throw new Error(`this pool holds a gallery as ${engine.size} shards, not ${paths.length}`);
  try {
    return await everyShard(paths.map((path, slot) => engine.runOnSlot(slot, "galleryRestore", galleryKey, path)));
  } catch (error) {
    await galleryDrop(galleryKey);
    throw error;
  }
}

/**
 * Every gallery the pool holds, in one task per thread: how many (each is sharded over every thread), their pets and
 * bytes. Galleries being loaded count with the shards they have.
 */
export async function galleryTotals(): Promise<{ galleries: number; pets: number; bytes: number }> {
  const engine = enginePool();
  const shards = await Promise.all(everySlot(engine).map((slot) => engine.runOnSlot(slot, "galleryTotals")));
  return {
    galleries: Math.max(0, ...shards.map((s) => s.galleries)),
    pets: shards.reduce((sum, s) => sum + s.pets, 0),
    bytes: shards.reduce((sum, s) => sum + s.bytes, 0),
  };
}

/** Whether the gallery is loaded (every shard), its pets, and the bytes its first stage holds. */
export async function galleryStats(galleryKey: string): Promise<{ loaded: boolean; pets: number; bytes: number }> {
  const engine = enginePool();
  const shards = await Promise.all(everySlot(engine).map((slot) => engine.runOnSlot(slot, "galleryStats", galleryKey)));
  if (!shards.every((shard) => shard.loaded)) return { loaded: false, pets: 0, bytes: 0 };
  return { loaded: true, pets: shards.reduce((sum, s) => sum + s.pets, 0), bytes: shards.reduce((sum, s) => sum + s.bytes, 0) };
}

let searches = 0;

/**
 * 1:N in a gallery: the cascade (`runCascade`: a fast pass, and a deep pass when it accepted nobody). Every shard's
 * first stage runs at once in its worker; the light and the full matching are shared out over the pool. The full
 * matching's templates (the promoted pets' only) come from `loadTemplates`, the light comparison's (every shortlisted
 * pet's) from `loadLightTemplates` (`lightTemplateOf`
 * each: a fifth of the bytes; by default the whole templates, which it cuts the same way). Pets that a loader leaves
 * out (deleted meanwhile) are skipped. With a way to turn the probe images (`probeTurns[p]` for `probeBytes[p]`: the views
 * its upload made, or its JPEG), a search whose upright passes accepted nobody runs a third pass on the probe's
 * quarter-turned views (`runCascade`, decisions 0029 and 0042).
 */
export async function identifyInGallery(
  galleryKey: string,
  probeBytes: Uint8Array[],
  loadTemplates: (petIds: string[]) => Promise<GalleryPet[]>,
  loadLightTemplates: (petIds: string[]) => Promise<GalleryPet[]> = loadTemplates,
  probeTurns?: ProbeTurns[],
  observe?: CascadeStages["observe"],
): Promise<IdentificationOutcome> {
  const engine = enginePool();
  // Every task of the search is posted the probe (and the turned pass its views): in shared memory, not copied each time.
  const probe = probeBytes.map(inSharedMemory);
  // Each shard keeps the fast pass's votes under this search's token; a deep pass adds the ± 40° frames' votes to them.
  const search = `search-${++searches}`;
  // The probe's lookups are computed once for every shard: from the frames a search's earlier pass looked up (each
  // shard resumes its votes), else all; a shard that can no longer resume computes its own (Gallery.shortlist).
  const shortlistOf = (templates: Uint8Array[], token?: string) => {
    let looked = 0;
    return async (limit: number, sets: number) => {
      const fromSet = token !== undefined && looked < sets ? looked : 0;
      const given = await engine.run("galleryProbeLookups", templates, sets, fromSet);
      if (token !== undefined) looked = sets;
      const shards = everySlot(engine).map((slot) =>
        engine.runOnSlot(slot, "galleryShortlist", galleryKey, templates, limit, sets, token, given).catch((error: unknown) => {
          if (error instanceof EngineTaskError && error.message.startsWith(GalleryNotLoadedError.errorName)) throw new GalleryNotLoadedError(galleryKey);
          throw error;
        }),
      );
      return mergeShortlists(await Promise.all(shards), limit);
    };
  };
  const rankLoaded = (pets: GalleryPet[], views?: Uint8Array[][]) => rankOverPool(probe, pets, views);
  const load = (petIds: string[]) => (petIds.length > 0 ? loadTemplates(petIds) : Promise.resolve([]));
  const rankWith = (views?: Uint8Array[][]) => async (petIds: string[]) => rankLoaded(await load(petIds), views);
  // Every batch's templates in one read (one round trip to the database), matched batch by batch.
  const rankBatchesWith = (views?: Uint8Array[][]) => async (batches: string[][]) => {
    const loaded = new Map((await load(batches.flat())).map((pet) => [pet.petId, pet]));
    return rankInTurn(batches, (petIds) => rankLoaded(petIds.flatMap((petId) => loaded.get(petId) ?? []), views));
  };
  const compareLightlyWith = (templates: Uint8Array[]) => async (petIds: string[]) =>
    shareOut(engine, await loadLightTemplates(petIds), (share) => engine.run("rerankCandidates", templates, share));
  return runCascade({
    shortlist: shortlistOf(probe, search),
    rank: rankWith(),
    rankBatches: rankBatchesWith(),
    compareLightly: compareLightlyWith(probe),
    // The turned pass (decision 0029): each probe image's quarter-turned views, as its upload made them (decision 0042)
    // or made now from its JPEG, at once over the pool; the best image's views shortlisted (decision 0056).
    turned: async () => {
      if (!probeTurns) return null;
      const views = (await Promise.all(probe.map((template, p) => turnedViewsOf(engine, template, probeTurns[p])))).map((turned) => turned.map(inSharedMemory));
      const picked = turnedPassImages(probe.map(templateQualityOf), views.map((turned) => turned.length > 0)).flatMap((p) => views[p]);
      if (picked.length === 0) return null;
      return { shortlist: shortlistOf(picked), rank: rankWith(views), rankBatches: rankBatchesWith(views), compareLightly: compareLightlyWith(picked) };
    },
    observe,
  });
}

/**
 * Probe image's quarter-turned views: those its upload stored (`views`, joined) when they are whole and of this engine's
 * template version, else made from its `jpeg` (none without one: the image is searched upright only).
 */
async function turnedViewsOf(engine: EnginePool, template: Uint8Array, turns: ProbeTurns | undefined): Promise<Uint8Array[]> {
  if (turns?.views?.length) {
    try {
      const views = splitTemplates(turns.views);
      if (views.length === QUARTER_TURNS.length && views.every((view) => templateVersionOf(view) === TEMPLATE_VERSION)) return views;
    } catch (error) {
      if (!(error instanceof TemplateFormatError)) throw error;
    }
  }
  return turns?.jpeg?.length ? engine.run("turnProbeImage", template, turns.jpeg) : [];
}

/** Runs `task` on shares of `items` dealt round-robin over the pool's workers, and joins the results (in share order). */
async function shareOut<T, R>(engine: EnginePool, items: T[], task: (share: T[]) => Promise<R[]>): Promise<R[]> {
  return (await Promise.all(sharesOf(engine, items).map(task))).flat();
}

/** `items` dealt round-robin into one share a worker (fewer when there are fewer items). */
function sharesOf<T>(engine: EnginePool, items: T[]): T[][] {
  return Array.from({ length: Math.min(engine.size, items.length) }, (_, i) => items.filter((_, j) => j % engine.size === i));
}

/**
 * Full matching of pets (`rankCandidates`, bit for bit) spread over the pool by enrolled image rather than by pet, so
 * that a step matching one or three pets keeps every worker busy: each enrolled image is compared with every probe
 * image on one worker (`matchEnrolledImages`), and the sessions are scored here. In the turned pass (`turnedViews`), a
 * pet the upright comparison does not accept is compared turned (`withQuarterTurns`) by probe image, one turned row a
 * task (`matchTurnedRows`), each pair keeping the better of its upright and turned similarity.
 */
export async function rankOverPool(probe: Uint8Array[], pets: GalleryPet[], turnedViews?: Uint8Array[][]): Promise<CandidateRanking> {
  const engine = enginePool();
  const matched = pets.filter((pet) => pet.templates.length > 0);
  // similarity[pet][p][e]: probe image p against the pet's enrolled image e.
  const similarity = matched.map((pet) => probe.map(() => new Array<number>(pet.templates.length).fill(0)));
  const columns = matched.flatMap((pet, i) => pet.templates.map((template, e) => ({ i, e, template })));
  await Promise.all(
    sharesOf(engine, columns).map(async (share) => {
      const result = await engine.run("matchEnrolledImages", probe, share.map((column) => column.template));
      share.forEach(({ i, e }, c) => result[c].forEach((value, p) => (similarity[i][p][e] = value)));
    }),
  );
  const rows = turnedViews
    ? matched.flatMap((pet, i) => (triesQuarterTurns(sessionRawScore(similarity[i])) ? probe.flatMap((_, row) => (turnedViews[row]?.length ? [{ i, row }] : [])) : []))
    : [];
  await Promise.all(
    sharesOf(engine, rows).map(async (share) => {
      const result = await engine.run("matchTurnedRows", turnedViews!, share.map(({ i, row }) => ({ row, enrolled: matched[i].templates })));
      share.forEach(({ i, row }, r) =>
        result[r].forEach((turned, e) => {
          if (turned !== null && turned > similarity[i][row][e]) similarity[i][row][e] = turned;
        }),
      );
    }),
  );
  return rankSessions(matched.map((pet, i) => ({ petId: pet.petId, raw: sessionRawScore(similarity[i]) })));
}

/** Single-image 1:1 score 0–100; with the first image's JPEG, a pair not accepted upright is also tried at its quarter turns. */
export function scoreImagePair(a: Uint8Array, b: Uint8Array, jpegOfA?: Uint8Array): Promise<number> {
  return enginePool().run("scoreImagePair", a, b, jpegOfA);
}

export async function shutdownEngine(): Promise<void> {
  const current = pool;
  pool = null;
  await current?.shutdown();
}
