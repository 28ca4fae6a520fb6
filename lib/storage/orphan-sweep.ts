import fs from "node:fs/promises";
import path from "node:path";
import type { Db } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { logError, logInfo } from "@/lib/log";

// An image file is written before its row is inserted, and a deletion removes rows before files, so
// a crash between the two steps (or a failed removal) can leave a file no row points at: invisible
// and never served, but disk the account no longer owns. The sweep removes such files. A file
// younger than the grace period may belong to an upload still in flight in another process and is
// left for a later sweep.

export interface SweepResult {
  scanned: number;
  removed: number;
}

async function listDir(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}

export async function sweepOrphanImages(db: Db, options: { graceMs: number }): Promise<SweepResult> {
  const dataDir = readEnv().dataDir;
  const imagesDir = path.join(dataDir, "images");
  const cutoff = Date.now() - options.graceMs;
  const result: SweepResult = { scanned: 0, removed: 0 };
  for (const accountId of await listDir(imagesDir)) {
    const where = { accountId };
    const [fingerprints, appearances] = await Promise.all([
      db.fingerprintImage.findMany({ where, select: { filePath: true } }),
      db.appearanceImage.findMany({ where, select: { filePath: true } }),
    ]);
    const referenced = new Set([...fingerprints, ...appearances].map((r) => path.normalize(r.filePath)));
    for (const sessionId of await listDir(path.join(imagesDir, accountId))) {
      const sessionDir = path.join(imagesDir, accountId, sessionId);
      for (const name of await listDir(sessionDir)) {
        const full = path.join(sessionDir, name);
        result.scanned++;
        if (referenced.has(path.relative(dataDir, full))) continue;
        const stat = await fs.stat(full).catch(() => null);
        if (!stat || stat.mtimeMs > cutoff) continue;
        await fs.rm(full, { force: true, recursive: true });
        result.removed++;
      }
      await fs.rmdir(sessionDir).catch(() => undefined);
    }
    await fs.rmdir(path.join(imagesDir, accountId)).catch(() => undefined);
  }
  return result;
}

const SWEEP_INTERVAL_MS = 60 * 60_000;

/**
 * At start-up, before the server serves: with the embedded database this process is the only
 * writer (the owner lock), so every unreferenced file is an orphan; with PostgreSQL other web
 * processes may be mid-upload, so only files past the grace period (ORPHAN_IMAGE_GRACE_SECONDS,
 * 10 minutes by default: uploads take well under a second from file to row) go. Then hourly, with
 * the grace.
 */
export async function startOrphanSweeps(db: Db, exclusiveWriter: boolean): Promise<() => void> {
  const graceMs = readEnv().ORPHAN_IMAGE_GRACE_SECONDS * 1000;
  const sweep = async (graceMs: number) => {
    try {
      const result = await sweepOrphanImages(db, { graceMs });
      if (result.removed > 0) logInfo("orphan-images-removed", { ...result });
    } catch (error) {
      logError("orphan-sweep-failed", error);
    }
  };
  await sweep(exclusiveWriter ? 0 : graceMs);
  const timer = setInterval(() => void sweep(graceMs), SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
