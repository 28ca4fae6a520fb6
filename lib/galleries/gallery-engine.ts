import type { IdentificationOutcome } from "@/lib/biometrics";
import { getEngine, type Engine } from "@/lib/jobs/engine-port";

/** The engine facade's gallery calls (lib/biometrics/index.ts): galleries live in its worker threads. */
export interface GalleryEngine {
  galleryUpsertPet(galleryKey: string, petId: string, templates: Uint8Array[]): Promise<void>;
  galleryRemovePet(galleryKey: string, petId: string): Promise<void>;
  galleryDrop(galleryKey: string): Promise<void>;
  galleryStats(galleryKey: string): Promise<{ pets: number; bytes: number }>;
  identifyInGallery(
    galleryKey: string,
    probe: Uint8Array[],
    loadTemplates: (petIds: string[]) => Promise<{ petId: string; templates: Uint8Array[] }[]>,
  ): Promise<IdentificationOutcome>;
}

/**
 * Until the engine's own gallery calls land: the galleries' templates in this thread, and each
 * identification sends the whole gallery to identifyPet (correct, but it copies every template on
 * every call; loadTemplates is not needed since the templates are at hand).
 */
function interimGalleryEngine(engine: Engine): GalleryEngine {
  const galleries = new Map<string, Map<string, Uint8Array[]>>();
  const galleryOf = (key: string) => {
    let gallery = galleries.get(key);
    if (!gallery) galleries.set(key, (gallery = new Map()));
    return gallery;
  };
  return {
    async galleryUpsertPet(key, petId, templates) {
      galleryOf(key).set(petId, templates);
    },
    async galleryRemovePet(key, petId) {
      galleries.get(key)?.delete(petId);
    },
    async galleryDrop(key) {
      galleries.delete(key);
    },
    async galleryStats(key) {
      const gallery = galleries.get(key) ?? new Map<string, Uint8Array[]>();
      let bytes = 0;
      for (const templates of gallery.values()) for (const t of templates) bytes += t.byteLength;
      return { pets: gallery.size, bytes };
    },
    async identifyInGallery(key, probe) {
      const gallery = [...(galleries.get(key) ?? new Map<string, Uint8Array[]>())].map(([petId, templates]) => ({ petId, templates }));
      return engine.identifyPet(probe, gallery);
    },
  };
}

const state = globalThis as unknown as { __rhinariumGalleryEngine?: Promise<GalleryEngine> };

export function getGalleryEngine(): Promise<GalleryEngine> {
  state.__rhinariumGalleryEngine ??= getEngine().then((engine) =>
    "identifyInGallery" in engine ? (engine as unknown as GalleryEngine) : interimGalleryEngine(engine),
  );
  return state.__rhinariumGalleryEngine;
}
