import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { openOwnedDatabase } from "@/lib/db";
import { pgliteDir } from "@/lib/db/connect";
import { acquireOwnerLock, releaseOwnerLock } from "@/lib/db/owner-lock";
import type { Env } from "@/lib/env";
import { makeDataDirPrivate } from "@/lib/private-files";
import { gallerySnapshotDir } from "@/lib/galleries/gallery-snapshots";
import { OpsUsageError } from "./errors";

// `ops backup DIR` and `ops restore DIR` for the embedded default (PGlite in DATA_DIR/db, images in
// DATA_DIR/images). A backup is a folder: PGlite's own dump of the database (taken between two
// queries, so consistent, while the server keeps serving), the image files, and a manifest. Images
// are copied after the dump, so every image the dump refers to is there (an image is written before
// its row) but for pets deleted while the backup ran. PostgreSQL and S3 have their own tools
// (pg_dump, bucket versioning): backup refuses those modes rather than half-copy them.

const DUMP_FILE = "db.tar.gz";
const IMAGES = "images";
const MANIFEST = "manifest.json";

interface Manifest {
  format: 1;
  createdAt: string;
  databaseBytes: number;
  images: number;
}

function countFiles(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;
}

/** Writes a backup into `target` (a new or empty folder), from the database's dump. */
export async function writeBackup(env: Env, dump: (() => Promise<Blob | undefined>) | undefined, target: string): Promise<Record<string, unknown>> {
  if (env.DATABASE_URL) throw new OpsUsageError("backup covers the embedded database; with DATABASE_URL use pg_dump");
  if (env.STORAGE_URL) throw new OpsUsageError("backup covers images in DATA_DIR; with STORAGE_URL use the store's own versioning or copy");
  if (!path.isAbsolute(target)) throw new OpsUsageError("the backup folder must be an absolute path");
  if (fs.existsSync(target) && fs.readdirSync(target).length > 0) throw new OpsUsageError(`${target} is not empty`);
  const tarball = await dump?.();
  if (!tarball) throw new OpsUsageError("no embedded database is open here");
  fs.mkdirSync(target, { recursive: true, mode: 0o700 });
  const bytes = Buffer.from(await tarball.arrayBuffer());
  fs.writeFileSync(path.join(target, DUMP_FILE), bytes, { mode: 0o600 });
  const images = path.join(env.dataDir, IMAGES);
  if (fs.existsSync(images)) fs.cpSync(images, path.join(target, IMAGES), { recursive: true });
  const manifest: Manifest = { format: 1, createdAt: new Date().toISOString(), databaseBytes: bytes.byteLength, images: countFiles(path.join(target, IMAGES)) };
  fs.writeFileSync(path.join(target, MANIFEST), JSON.stringify(manifest, null, 2), { mode: 0o600 });
  makeDataDirPrivate(target);
  return { backup: target, ...manifest };
}

/**
 * Restores a backup into DATA_DIR, which must hold no database yet (a fresh folder, or one whose
 * `db` was moved away): refused while any process owns the database. Then opens it once, so that
 * migrations newer than the backup are applied, and answers what it holds.
 */
export async function restoreBackup(env: Env, source: string): Promise<Record<string, unknown>> {
  if (env.DATABASE_URL || env.STORAGE_URL) throw new OpsUsageError("restore is for the embedded default (no DATABASE_URL, no STORAGE_URL)");
  const manifestPath = path.join(source, MANIFEST);
  if (!fs.existsSync(manifestPath)) throw new OpsUsageError(`${source} is not a backup (no ${MANIFEST})`);
  const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as Manifest;
  if (manifest.format !== 1) throw new OpsUsageError(`unknown backup format ${String(manifest.format)}`);
  const dbDir = pgliteDir(env);
  fs.mkdirSync(env.dataDir, { recursive: true, mode: 0o700 });
  acquireOwnerLock(env, "cli");
  try {
    if (fs.existsSync(dbDir) && fs.readdirSync(dbDir).length > 0) throw new OpsUsageError(`${dbDir} already holds a database: move it away first`);
    const tarball = new Blob([fs.readFileSync(path.join(source, DUMP_FILE))]);
    const pglite = await PGlite.create(dbDir, { loadDataDir: tarball });
    await pglite.close();
    const images = path.join(source, IMAGES);
    if (fs.existsSync(images)) fs.cpSync(images, path.join(env.dataDir, IMAGES), { recursive: true, force: false, errorOnExist: false });
    // Snapshots of the galleries of the database that was moved away: galleries load from the restored one.
    fs.rmSync(gallerySnapshotDir(env.dataDir), { recursive: true, force: true });
  } finally {
    releaseOwnerLock(env);
  }
  const db = await openOwnedDatabase(env, "cli");
  try {
    const [accounts, pets, fingerprints] = await Promise.all([db.prisma.account.count(), db.prisma.pet.count(), db.prisma.fingerprintImage.count()]);
    return { restored: source, createdAt: manifest.createdAt, accounts, pets, fingerprints, images: countFiles(path.join(env.dataDir, IMAGES)) };
  } finally {
    await db.close();
  }
}
