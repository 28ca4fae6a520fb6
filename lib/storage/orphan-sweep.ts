import path from "node:path";
import type { Db } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { logError, logInfo } from "@/lib/log";
import { getImageStore, type ImageStore } from "./images";

// An image file is written before its row is inserted, and a deletion removes rows before files, so
// a crash between the two steps (or a failed removal) can leave a file no row points at: invisible
// and never served, but storage the account no longer owns. The sweep removes such files, on disk
// or in the S3 store alike. A file younger than the grace period may belong to an upload still in
// flight in another process and is left for a later sweep.

export interface SweepResult {
  scanned: number;
  removed: number;
}

async function referencedKeys(db: Db, accountId: string): Promise<Set<string>> {
  const where = { accountId };
  const [fingerprints, appearances] = await Promise.all([
    db.fingerprintImage.findMany({ where, select: { filePath: true } }),
    db.appearanceImage.findMany({ where, select: { filePath: true } }),
  ]);
  return new Set([...fingerprints, ...appearances].map((r) => path.posix.normalize(r.filePath)));
}

export async function sweepOrphanImages(db: Db, store: ImageStore, options: { graceMs: number }): Promise<SweepResult> {
  const cutoff = Date.now() - options.graceMs;
  const result: SweepResult = { scanned: 0, removed: 0 };
  // The store lists one account's keys after another: only that account's rows are held at a time.
  let account: string | undefined;
  let referenced = new Set<string>();
  let orphans: string[] = [];
  const removeOrphans = async () => {
    await store.remove(orphans);
    result.removed += orphans.length;
    orphans = [];
  };
  for await (const image of store.list()) {
    result.scanned++;
    const accountId = image.key.split("/")[1];
    if (accountId !== account) {
      await removeOrphans();
      account = accountId;
      referenced = await referencedKeys(db, accountId);
    }
    if (!referenced.has(image.key) && image.modifiedMs <= cutoff) orphans.push(image.key);
  }
  await removeOrphans();
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
      const result = await sweepOrphanImages(db, getImageStore(), { graceMs });
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
