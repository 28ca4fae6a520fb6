/**
 * A gallery is not in the engine (never loaded, or its worker thread was replaced): the caller reloads
 * it. Thrown in the worker and thrown again, as the same class, by the facade on the caller's thread;
 * this module has no imports, so the facade can use it without loading the engine.
 */
export class GalleryNotLoadedError extends Error {
  static readonly errorName = "GalleryNotLoadedError";

  constructor(readonly galleryKey: string) {
    super(`gallery ${galleryKey} is not loaded in the engine`);
    this.name = GalleryNotLoadedError.errorName;
  }
}
