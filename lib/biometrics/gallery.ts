import { SHORTLIST_SIZE } from "./parameters";
import { SearchIndex } from "./search-index";
import { combineSearchVectors, SEARCH_VECTOR_DIMS } from "./search-vector";
import { deserializeTemplate, type NoseTemplate } from "./template";

/** What a gallery's first stage returns: the pets worth matching in full, best first. */
export interface GalleryShortlist {
  petIds: string[];
  /** Pets in the gallery when it was searched. */
  searched: number;
}

/**
 * One account's (or search pool's) enrolled pets, held in memory for 1:N: only what the first stage
 * needs (never full templates, which the caller loads for the shortlist), so that 100,000 pets fit.
 */
export class Gallery {
  private readonly index = new SearchIndex();

  get size(): number {
    return this.index.size;
  }

  /** Bytes held per pet by the first stage (the figure the capacity plan multiplies). */
  get bytes(): number {
    return this.index.size * SEARCH_VECTOR_DIMS;
  }

  upsert(petId: string, templates: readonly NoseTemplate[]): void {
    if (templates.length === 0) {
      this.remove(petId);
      return;
    }
    this.index.upsert(petId, combineSearchVectors(templates.map((t) => t.searchVector)));
  }

  remove(petId: string): boolean {
    const had = this.index.has(petId);
    this.index.remove(petId);
    return had;
  }

  shortlist(probe: readonly NoseTemplate[], limit = SHORTLIST_SIZE): GalleryShortlist {
    const hits = this.index.search(combineSearchVectors(probe.map((t) => t.searchVector)), limit);
    return { petIds: hits.map((hit) => hit.petId), searched: this.index.size };
  }
}

/** The galleries a worker thread holds, by key. A worker that is replaced starts with none. */
const galleries = new Map<string, Gallery>();

export class GalleryNotLoadedError extends Error {
  constructor(key: string) {
    super(`gallery ${key} is not loaded in this engine worker`);
    this.name = "GalleryNotLoadedError";
  }
}

export function galleryUpsertPet(key: string, petId: string, templates: Uint8Array[]): void {
  let gallery = galleries.get(key);
  if (!gallery) galleries.set(key, (gallery = new Gallery()));
  gallery.upsert(petId, templates.map(deserializeTemplate));
}

export function galleryRemovePet(key: string, petId: string): boolean {
  return galleries.get(key)?.remove(petId) ?? false;
}

export function galleryDrop(key: string): void {
  galleries.delete(key);
}

export function galleryStats(key: string): { loaded: boolean; pets: number; bytes: number } {
  const gallery = galleries.get(key);
  return { loaded: gallery !== undefined, pets: gallery?.size ?? 0, bytes: gallery?.bytes ?? 0 };
}

export function galleryShortlist(key: string, probe: Uint8Array[]): GalleryShortlist {
  const gallery = galleries.get(key);
  if (!gallery) throw new GalleryNotLoadedError(key);
  return gallery.shortlist(probe.map(deserializeTemplate));
}
