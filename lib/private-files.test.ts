import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openOwnedDatabase } from "@/lib/db";
import { readEnv } from "@/lib/env";
import { DiskImageStore } from "@/lib/storage/images";

// Every file under DATA_DIR is its user's only: the embedded database (WAL included), images and
// secrets, whatever modes an older version left.

function looseEntries(root: string): string[] {
  const loose: string[] = [];
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() && !entry.isDirectory()) continue;
    if ((fs.statSync(full).mode & 0o077) !== 0) loose.push(`${path.relative(root, full)} ${(fs.statSync(full).mode & 0o777).toString(8)}`);
  }
  if ((fs.statSync(root).mode & 0o077) !== 0) loose.push(". (the folder itself)");
  return loose;
}

describe("DATA_DIR modes", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-modes-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("leaves nothing readable by others after start-up, the database and an image written", async () => {
    const previousUmask = process.umask(0o022);
    try {
      // What an older version left: world-readable files and folders.
      fs.chmodSync(dir, 0o755);
      fs.mkdirSync(path.join(dir, "images", "old"), { recursive: true, mode: 0o755 });
      fs.writeFileSync(path.join(dir, "images", "old", "a.jpg"), "x", { mode: 0o644 });
      fs.chmodSync(path.join(dir, "images", "old", "a.jpg"), 0o666);
      const open = await openOwnedDatabase(readEnv({ DATA_DIR: dir } as unknown as NodeJS.ProcessEnv), "cli");
      await open.prisma.account.create({ data: { name: "modes" } });
      await new DiskImageStore(dir).write("images/acc/sess/fingerprint-1.jpg", new Uint8Array([1, 2, 3]));
      await open.close();
      expect(fs.readdirSync(path.join(dir, "db")).length).toBeGreaterThan(0);
      expect(looseEntries(dir)).toEqual([]);
    } finally {
      process.umask(previousUmask);
    }
  });
});
