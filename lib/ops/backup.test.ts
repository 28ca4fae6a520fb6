import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openOwnedDatabase } from "@/lib/db";
import { readEnv } from "@/lib/env";
import { restoreBackup, writeBackup } from "./backup";
import { gallerySnapshotDir } from "@/lib/galleries/gallery-snapshots";
import { OpsUsageError } from "./errors";

// ops backup / restore of the embedded default, here in-process (the CLI path). Through a running
// server's ops port: tests/server/hardening.test.ts.

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-backup-"));
  dirs.push(dir);
  return dir;
};
const envOf = (dataDir: string, extra: Record<string, string> = {}) => readEnv({ DATA_DIR: dataDir, ...extra } as unknown as NodeJS.ProcessEnv);
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe("embedded backup and restore", () => {
  it("restores into a fresh DATA_DIR the accounts, pets and image files the backup held", async () => {
    const source = envOf(tempDir());
    const db = await openOwnedDatabase(source, "cli");
    const account = await db.prisma.account.create({ data: { name: "Clinic" } });
    await db.prisma.pet.create({ data: { accountId: account.id, species: "DOG", metadata: '{"name":"Rex"}' } });
    const image = path.join(source.dataDir, "images", account.id, "session-1", "nose.jpg");
    fs.mkdirSync(path.dirname(image), { recursive: true });
    fs.writeFileSync(image, Buffer.from([0xff, 0xd8, 0xff, 1, 2, 3]));
    const target = path.join(tempDir(), "backup");
    const written = await writeBackup(source, db.dump, target);
    await db.close();
    expect(written).toMatchObject({ backup: target, format: 1, images: 1 });
    expect(written.databaseBytes).toBeGreaterThan(1000);
    expect((fs.statSync(path.join(target, "db.tar.gz")).mode & 0o777).toString(8)).toBe("600");

    const restoredEnv = envOf(tempDir());
    // Gallery snapshots left from a database moved away would describe another database: the restore removes them.
    const snapshot = path.join(gallerySnapshotDir(restoredEnv.dataDir), "gallery.json");
    fs.mkdirSync(path.dirname(snapshot), { recursive: true });
    fs.writeFileSync(snapshot, "{}");
    const restored = await restoreBackup(restoredEnv, target);
    expect(fs.existsSync(snapshot)).toBe(false);
    expect(restored).toMatchObject({ accounts: 1, pets: 1, images: 1 });
    expect(fs.readFileSync(path.join(restoredEnv.dataDir, "images", account.id, "session-1", "nose.jpg"))).toEqual(fs.readFileSync(image));
    const reopened = await openOwnedDatabase(restoredEnv, "cli");
    try {
      expect((await reopened.prisma.pet.findFirstOrThrow()).metadata).toBe('{"name":"Rex"}');
    } finally {
      await reopened.close();
    }
  });

  it("refuses what it cannot do whole: a non-empty target, a DATA_DIR that holds a database, PostgreSQL or S3 modes, a folder that is no backup", async () => {
    const source = envOf(tempDir());
    const db = await openOwnedDatabase(source, "cli");
    try {
      const occupied = tempDir();
      fs.writeFileSync(path.join(occupied, "x"), "x");
      await expect(writeBackup(source, db.dump, occupied)).rejects.toThrow(/not empty/);
      await expect(writeBackup(source, db.dump, "relative/dir")).rejects.toBeInstanceOf(OpsUsageError);
      await expect(writeBackup(envOf(tempDir(), { DATABASE_URL: "postgres://x/y" }), db.dump, path.join(tempDir(), "b"))).rejects.toThrow(/pg_dump/);
      await expect(writeBackup(envOf(tempDir(), { STORAGE_URL: "s3://bucket" }), db.dump, path.join(tempDir(), "b"))).rejects.toBeInstanceOf(OpsUsageError);
      const target = path.join(tempDir(), "backup");
      await writeBackup(source, db.dump, target);
      // The source still holds its database (and a server or this process owns it).
      await expect(restoreBackup(source, target)).rejects.toThrow();
      await expect(restoreBackup(envOf(tempDir()), tempDir())).rejects.toThrow(/not a backup/);
    } finally {
      await db.close();
    }
    const target = path.join(tempDir(), "again");
    const reopened = await openOwnedDatabase(source, "cli");
    await writeBackup(source, reopened.dump, target);
    await reopened.close();
    await expect(restoreBackup(source, target)).rejects.toThrow(/already holds a database/);
  });
});
