import fs from "node:fs/promises";
import path from "node:path";
import { readEnv } from "@/lib/env";
import { logError } from "@/lib/log";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "@/lib/private-files";
import { S3ImageStore } from "./s3-image-store";
import { processWide } from "@/lib/process-state";

// Images are stored under a key `images/<accountId>/<sessionId>/<kind>-<imageId>.jpg`, which the
// database keeps (`filePath`). By default the key is a path under DATA_DIR, so a data folder can be
// moved or restored as a whole; with STORAGE_URL (s3://bucket[/prefix]?endpoint=...&region=...) it is
// an object key in any S3-compatible store, which every web and worker process reaches.

export type ImageKind = "fingerprint" | "appearance";

/** The one storage interface: the rest of the app stores, reads and removes images only through it. */
export interface ImageStore {
  write(key: string, bytes: Uint8Array): Promise<void>;
  /** The stored bytes; throws when the image does not exist. */
  read(key: string): Promise<Uint8Array>;
  /** A key already gone is not an error. */
  remove(keys: string[]): Promise<void>;
  /** Every stored image, one account's keys after another (the orphan sweep compares them with its rows). */
  list(): AsyncIterable<StoredImage>;
}

export interface StoredImage {
  key: string;
  /** When it was written (file mtime, object LastModified). */
  modifiedMs: number;
}

async function listDir(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}

export class DiskImageStore implements ImageStore {
  constructor(private readonly root: string) {}

  async write(key: string, bytes: Uint8Array): Promise<void> {
    const full = this.pathOf(key);
    // A deletion (or a refused upload's clean-up) may remove the emptied session folder between the
    // mkdir and the write, or during the mkdir: then both again.
    for (let attempt = 1; ; attempt++) {
      try {
        await fs.mkdir(path.dirname(full), { recursive: true, mode: PRIVATE_DIR_MODE });
        await fs.writeFile(full, bytes, { mode: PRIVATE_FILE_MODE });
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 5) throw error;
      }
    }
  }

  async read(key: string): Promise<Uint8Array> {
    return fs.readFile(this.pathOf(key));
  }

  /** Removes the files and the session folders they leave empty. */
  async remove(keys: string[]): Promise<void> {
    const folders = new Set<string>();
    for (const key of keys) {
      const full = this.pathOf(key);
      folders.add(path.dirname(full));
      await fs.rm(full, { force: true }).catch((error) => logError("image-remove-failed", error, { key }));
    }
    for (const folder of folders) await fs.rmdir(folder).catch(() => undefined);
  }

  async *list(): AsyncIterable<StoredImage> {
    const imagesDir = path.join(this.root, "images");
    for (const accountId of await listDir(imagesDir)) {
      for (const sessionId of await listDir(path.join(imagesDir, accountId))) {
        for (const name of await listDir(path.join(imagesDir, accountId, sessionId))) {
          const key = path.posix.join("images", accountId, sessionId, name);
          const stat = await fs.stat(this.pathOf(key)).catch(() => null);
          if (stat?.isFile()) yield { key, modifiedMs: stat.mtimeMs };
        }
      }
    }
  }

  private pathOf(key: string): string {
    const full = path.resolve(this.root, key);
    // Keys are built by imageRelativePath; this only guards against a corrupted row escaping the folder.
    if (!full.startsWith(this.root + path.sep)) throw new Error(`image key outside the data folder: ${key}`);
    return full;
  }
}

export function imageStoreFromUrl(storageUrl: string | undefined, dataDir: string): ImageStore {
  return storageUrl ? S3ImageStore.fromUrl(storageUrl) : new DiskImageStore(dataDir);
}

// One store per process, built from the environment on first use.
export function getImageStore(): ImageStore {
  return processWide("imageStore", () => {
    const env = readEnv();
    return imageStoreFromUrl(env.STORAGE_URL, env.dataDir);
  });
}

export function imageRelativePath(accountId: string, sessionId: string, kind: ImageKind, imageId: string): string {
  return path.posix.join("images", accountId, sessionId, `${kind}-${imageId}.jpg`);
}

export function writeImageFile(key: string, bytes: Uint8Array): Promise<void> {
  return getImageStore().write(key, bytes);
}

export function readImageFile(key: string): Promise<Uint8Array> {
  return getImageStore().read(key);
}

export function removeImageFiles(keys: string[]): Promise<void> {
  return getImageStore().remove(keys);
}
