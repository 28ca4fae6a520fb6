import fs from "node:fs/promises";
import path from "node:path";
import { readEnv } from "@/lib/env";
import { logError } from "@/lib/log";

// Images live on disk under DATA_DIR/images/<accountId>/<sessionId>/<kind>-<imageId>.jpg. The database
// stores the path relative to DATA_DIR, so a data folder can be moved or restored as a whole.

export type ImageKind = "fingerprint" | "appearance";

function dataDir(): string {
  return readEnv().dataDir;
}

export function imageRelativePath(accountId: string, sessionId: string, kind: ImageKind, imageId: string): string {
  return path.join("images", accountId, sessionId, `${kind}-${imageId}.jpg`);
}

export async function writeImageFile(relativePath: string, bytes: Uint8Array): Promise<void> {
  const full = path.join(dataDir(), relativePath);
  // A deletion (or a refused upload's clean-up) may remove the emptied session folder between the
  // mkdir and the write, or during the mkdir: then both again.
  for (let attempt = 1; ; attempt++) {
    try {
      await fs.mkdir(path.dirname(full), { recursive: true });
      await fs.writeFile(full, bytes);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 5) throw error;
    }
  }
}

export async function readImageFile(relativePath: string): Promise<Uint8Array> {
  return fs.readFile(path.join(dataDir(), relativePath));
}

/** Removes files and the session folders they leave empty; a file already gone is not an error. */
export async function removeImageFiles(relativePaths: string[]): Promise<void> {
  const folders = new Set<string>();
  for (const relativePath of relativePaths) {
    const full = path.join(dataDir(), relativePath);
    folders.add(path.dirname(full));
    await fs.rm(full, { force: true }).catch((error) => logError("image-remove-failed", error, { relativePath }));
  }
  for (const folder of folders) {
    await fs.rmdir(folder).catch(() => undefined);
  }
}
