import fs from "node:fs";
import { GalleryNotLoadedError } from "./gallery-not-loaded";
import type { GalleryShortlist } from "./gallery-shortlist";
import { InvertedIndex } from "./inverted-index";
import { probeVoteWeight } from "./distinctiveness";
import { keypointBurstWeights } from "./pair-matcher";
import { computeProbeLookups, queryWordsFor, type ProbeLookups, type SearchKey } from "./search-key";
import type { PackedPets } from "./packed-pets";
import { DESCRIPTOR_SETS } from "./parameters";
import { FileSink, FileSource, SnapshotChangedError, type SnapshotSink, type SnapshotWriter } from "./snapshot-stream";
import { descriptorSetCount, deserializeTemplate, keypointCount, type NoseTemplate } from "./template";

/**
 * One account's (or search pool's) enrolled pets, held in memory for 1:N: only their images' search
 * keys in an inverted index (never full templates, which the caller loads for the shortlist), so that
 * 100,000 pets fit in one worker.
 */
export class Gallery {
  private readonly index = new InvertedIndex();
  /** Searches whose votes the index keeps (`shortlist` with a search token): the frames they were cast by. */
  private readonly keptFrames = new Map<string, number>();

  get size(): number {
    return this.index.size;
  }

  /** Bytes the index holds (postings and per-image scratch): the figure the capacity plan multiplies. */
  get bytes(): number {
    return this.index.bytes;
  }

  /** Adds or replaces a pet's images; no images removes the pet. */
  upsert(petId: string, keys: readonly SearchKey[]): void {
    this.index.upsert(petId, keys);
  }

  /** Adds or replaces many pets at once, from their packed search keys (a gallery load's batch: InvertedIndex.upsertMany). */
  upsertMany(pets: PackedPets): void {
    this.index.upsertMany(pets);
  }

  remove(petId: string): boolean {
    return this.index.remove(petId);
  }

  /** The gallery's snapshot, a slice at a time (InvertedIndex.snapshotWriter). */
  snapshotWriter(sink: SnapshotSink): SnapshotWriter {
    return this.index.snapshotWriter(sink);
  }

  /** Replaces the gallery by the one saved at `path`; throws (the gallery empty) when the file is not a whole snapshot. */
  restore(path: string): void {
    const fd = fs.openSync(path, "r");
    try {
      this.index.readSnapshot(new FileSource(fd));
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Returns the index's memory to the thread's kernel heap; the gallery is empty afterwards. */
  dispose(): void {
    this.index.dispose();
  }

  /**
   * The first stage: the `limit` best pets, best first, by the probe's lookups in its first `sets` descriptor frames
   * (the cascade's fast pass: SHORTLIST_SIZE by MATCHED_SETS frames; its deep pass: RERANK_CANDIDATES by all).
   */
  shortlist(probe: readonly NoseTemplate[], limit: number, sets: number, search?: string, given?: GivenLookups): GalleryShortlist {
    // With a search token, a pass by fewer than all frames keeps its votes, and the next pass of the same search adds
    // only its further frames' votes to them (the same scores as looking up every frame again; InvertedIndex.search).
    const kept = search === undefined ? undefined : this.keptFrames.get(search);
    const resume = search !== undefined && kept !== undefined && kept < sets && this.index.holdsVotes(search, probe.length);
    const fromSet = resume ? kept! : 0;
    // The caller's lookups when they start where this shard resumes (`probeLookups`, computed once for every shard),
    // else the probe's own.
    const lookups = given && given.fromSet === fromSet && given.lookups.length === probe.length ? given.lookups : probeLookups(probe, sets, fromSet);
    const keep = search !== undefined && sets < DESCRIPTOR_SETS;
    if (search !== undefined) {
      this.keptFrames.delete(search);
      if (keep) this.keptFrames.set(search, sets);
      // Tokens of searches whose votes the index no longer keeps are forgotten.
      for (const token of this.keptFrames.keys()) if (token !== search && !this.index.holdsVotes(token)) this.keptFrames.delete(token);
    }
    const hits = this.index.search(lookups, limit, search === undefined || (!keep && !resume) ? undefined : { token: search, resume, keep });
    return { petIds: hits.map((hit) => hit.petId), scores: hits.map((hit) => hit.score), searched: this.index.size };
  }
}

/** A probe's lookups computed ahead for the shards of a gallery: each image's, in its frames `fromSet` up. */
export interface GivenLookups {
  fromSet: number;
  lookups: ProbeLookups[];
}

/**
 * Each probe image's first-stage lookups in its frames `fromSet` to `sets` - 1. A probe image extracted without outer
 * frames (extract.ts) looks up in the frames it has. A probe keypoint repeated across its image (a periodic backdrop,
 * pair-matcher.ts `keypointBurstWeights`) votes as little as it counts as an inlier: otherwise every pet enrolled on the
 * same backdrop collects its votes.
 */
export function probeLookups(probe: readonly NoseTemplate[], sets: number, fromSet = 0): ProbeLookups[] {
  return probe.map((t) => {
    const burst = keypointBurstWeights(t);
    return computeProbeLookups(keypointCount(t), t.descriptors, Math.min(sets, descriptorSetCount(t)), (k) => burst[k] * probeVoteWeight(t.genericness[k]), fromSet, queryWordsFor(t.quality));
  });
}

/** probeLookups on serialised templates, run once in a pool worker for all of a gallery's shards (index.ts). */
export function galleryProbeLookups(probe: Uint8Array[], sets: number, fromSet: number): GivenLookups {
  return { fromSet, lookups: probeLookups(probe.map(deserializeTemplate), sets, fromSet) };
}

/** The galleries a worker thread holds, by key. A worker that is replaced starts with none. */
const galleries = new Map<string, Gallery>();

/** Creates the gallery if needed (also for no pets: an empty shard is a loaded one), then adds or replaces each pet. */
export function galleryUpsertPets(key: string, pets: PackedPets): void {
  let gallery = galleries.get(key);
  if (!gallery) galleries.set(key, (gallery = new Gallery()));
  gallery.upsertMany(pets);
}

/**
 * Bytes of posting lists a save writes a task (`gallerySaveSlice`). At 100,000 pets another task on the thread waited at
 * most 149 ms with 16 MiB, 324 ms with 64 MiB, 3.7 s with the whole shard at once (the identification bench).
 */
const SAVE_SLICE_BYTES = 16 * 1024 * 1024;

/** Saves in progress in this thread, by file. */
const saves = new Map<string, { gallery: Gallery; fd: number; sink: FileSink; writer: SnapshotWriter }>();

/**
 * Writes the next slice of this thread's shard of the gallery to a new file at `path` (the first call creates it), so
 * that searches run between slices rather than wait for the whole shard; resolves `done` with the shard's pets and
 * bytes once the file is whole (flushing it to disk is the caller's). When the gallery changed or was replaced since
 * the first slice, the file is removed and SnapshotChangedError thrown.
 */
export function gallerySaveSlice(key: string, path: string): { done: boolean; pets: number; bytes: number } {
  const gallery = galleries.get(key);
  let save = saves.get(path);
  if (!save) {
    if (!gallery) throw new GalleryNotLoadedError(key);
    const fd = fs.openSync(path, "wx", 0o600);
    const sink = new FileSink(fd);
    saves.set(path, (save = { gallery, fd, sink, writer: gallery.snapshotWriter(sink) }));
  }
  try {
    if (gallery !== save.gallery) throw new SnapshotChangedError("the gallery was dropped while it was saved");
    if (!save.writer.write(SAVE_SLICE_BYTES)) return { done: false, pets: 0, bytes: 0 };
    save.sink.flush();
    fs.closeSync(save.fd);
    saves.delete(path);
    return { done: true, pets: gallery.size, bytes: gallery.bytes };
  } catch (error) {
    fs.closeSync(save.fd);
    fs.rmSync(path, { force: true });
    saves.delete(path);
    throw error;
  }
}

/** Replaces this thread's shard of the gallery by the one saved at `path`; when that fails, the shard is dropped and the error thrown. */
export function galleryRestore(key: string, path: string): { pets: number; bytes: number } {
  galleryDrop(key);
  const gallery = new Gallery();
  try {
    gallery.restore(path);
  } catch (error) {
    gallery.dispose();
    throw error;
  }
  galleries.set(key, gallery);
  return { pets: gallery.size, bytes: gallery.bytes };
}

export function galleryRemovePet(key: string, petId: string): boolean {
  return galleries.get(key)?.remove(petId) ?? false;
}

export function galleryDrop(key: string): void {
  galleries.get(key)?.dispose();
  galleries.delete(key);
}

export function galleryStats(key: string): { loaded: boolean; pets: number; bytes: number } {
  const gallery = galleries.get(key);
  return { loaded: gallery !== undefined, pets: gallery?.size ?? 0, bytes: gallery?.bytes ?? 0 };
}

/** Every gallery this worker holds a shard of: how many, their pets and bytes (for /metrics). */
export function galleryTotals(): { galleries: number; pets: number; bytes: number } {
  let pets = 0;
  let bytes = 0;
  for (const gallery of galleries.values()) {
    pets += gallery.size;
    bytes += gallery.bytes;
  }
  return { galleries: galleries.size, pets, bytes };
}

export function galleryShortlist(key: string, probe: Uint8Array[], limit: number, sets: number, search?: string, given?: GivenLookups): GalleryShortlist {
  const gallery = galleries.get(key);
  if (!gallery) throw new GalleryNotLoadedError(key);
  return gallery.shortlist(probe.map(deserializeTemplate), limit, sets, search, given);
}
