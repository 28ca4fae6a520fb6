import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

/**
 * A gallery's snapshot on local disk (decision 0041): each engine thread's shard as its thread wrote it
 * (`gallerySave`), and a manifest naming them, written last. A restarted process restores the shards in place of
 * indexing every pet's keys again, then applies the gallery changes recorded after the manifest's cursor. The files
 * are a cache of the database: losing them costs a full load, never data.
 */
export interface SnapshotManifest {
  format: typeof MANIFEST_FORMAT;
  gallery: string;
  engineVersion: number;
  /** Engine threads the gallery was sharded over: pets are dealt to shards by this count. */
  shards: number;
  generation: string;
  /** Every GalleryChange of the account up to this id is in the shards (later ones may be too: applying one is idempotent). */
  cursor: string;
  /** When that change was recorded (ISO), to tell a database that is not the one the snapshot was taken of; null for cursor 0. */
  cursorAt: string | null;
  savedAt: string;
  pets: number;
  bytes: number;
}

const MANIFEST_FORMAT = 1;

/** Where a process keeps its galleries' snapshots: under DATA_DIR, beside the embedded database. */
export function gallerySnapshotDir(dataDir: string): string {
  return path.join(dataDir, "galleries");
}
/** A shard file a concurrent writer may still be renaming into place is left alone for this long. */
const STRAY_FILE_MS = 10 * 60_000;

export class GallerySnapshots {
  constructor(readonly dir: string) {}

  /** The gallery key as a file name (keys hold "/" and "*"). */
  private stem(gallery: string): string {
    return Buffer.from(gallery).toString("base64url");
  }

  private manifestPath(gallery: string): string {
    return path.join(this.dir, `${this.stem(gallery)}.json`);
  }

  shardPaths(gallery: string, generation: string, shards: number): string[] {
    return Array.from({ length: shards }, (_, slot) => path.join(this.dir, `${this.stem(gallery)}.${generation}.${slot}.shard`));
  }

  /** The gallery's manifest, or null when there is none or it cannot be read (a snapshot is a cache: it is then rebuilt). */
  async manifest(gallery: string): Promise<SnapshotManifest | null> {
    try {
      const manifest = JSON.parse(await fs.readFile(this.manifestPath(gallery), "utf8")) as SnapshotManifest;
      return manifest.format === MANIFEST_FORMAT && manifest.gallery === gallery ? manifest : null;
    } catch {
      return null;
    }
  }

  /** Shard files for a new snapshot, not yet in place (`publish` puts them there). */
  async prepare(gallery: string, shards: number): Promise<{ generation: string; paths: string[] }> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const generation = `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
    return { generation, paths: this.shardPaths(gallery, generation, shards) };
  }

  /**
   * Makes the written shards the gallery's snapshot: each is flushed to disk, then the manifest is written beside and
   * renamed over the last one, so a crash leaves the old snapshot or the new one whole. Files of older snapshots go.
   */
  async publish(manifest: Omit<SnapshotManifest, "format">): Promise<void> {
    const paths = this.shardPaths(manifest.gallery, manifest.generation, manifest.shards);
    await Promise.all(paths.map(flushToDisk));
    const target = this.manifestPath(manifest.gallery);
    const previous = await this.manifest(manifest.gallery);
    const part = `${target}.${manifest.generation}.part`;
    await fs.writeFile(part, JSON.stringify({ format: MANIFEST_FORMAT, ...manifest }), { mode: 0o600 });
    await flushToDisk(part);
    await fs.rename(part, target);
    if (previous && previous.generation !== manifest.generation) await this.discard(this.shardPaths(previous.gallery, previous.generation, previous.shards));
    await this.removeStale(manifest.gallery, manifest.generation);
  }

  /** Removes the shard files of a snapshot that was not published. */
  async discard(paths: string[]): Promise<void> {
    await Promise.all(paths.map((file) => fs.rm(file, { force: true })));
  }

  /** Shard files of no published snapshot (a crashed writer's; another process's being written are left for STRAY_FILE_MS). */
  private async removeStale(gallery: string, current: string): Promise<void> {
    const prefix = `${this.stem(gallery)}.`;
    for (const name of await fs.readdir(this.dir)) {
      if (!name.startsWith(prefix) || name.startsWith(`${prefix}${current}.`) || name.startsWith(`${prefix}json`)) continue;
      const file = path.join(this.dir, name);
      const stat = await fs.stat(file).catch(() => null);
      if (stat && Date.now() - stat.mtimeMs > STRAY_FILE_MS) await fs.rm(file, { force: true });
    }
  }
}

async function flushToDisk(file: string): Promise<void> {
  const handle = await fs.open(file, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
