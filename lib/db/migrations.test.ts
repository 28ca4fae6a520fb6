import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, describe, expect, it } from "vitest";
import { migrationsDir } from "./migrate";

// Migrations that move data, run on a database holding the data of the schema before them.

const migrations = fs.readdirSync(migrationsDir).filter((d) => /^\d/.test(d)).sort();
const sqlOf = (name: string) => fs.readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8");

/** A fresh database with every migration before `name` applied. */
async function databaseBefore(name: string): Promise<PGlite> {
  const at = migrations.indexOf(name);
  expect(at).toBeGreaterThan(0);
  const pg = new PGlite();
  for (const m of migrations.slice(0, at)) await pg.exec(sqlOf(m));
  return pg;
}

const opened: PGlite[] = [];
afterAll(async () => Promise.all(opened.map((pg) => pg.close())));

describe("migrations that move data", () => {
  it("api_usage_counts carries every logged call over as counts per key, route, status and second", async () => {
    const name = migrations.find((m) => m.endsWith("_api_usage_counts"))!;
    const pg = await databaseBefore(name);
    opened.push(pg);
    await pg.exec(`
      INSERT INTO "Account" (id, name) VALUES ('a', 'A');
      INSERT INTO "ApiKey" (id, "accountId", hash, prefix) VALUES ('k', 'a', 'h', 'rk_');
      INSERT INTO "ApiCall" (id, "accountId", "apiKeyId", method, route, status, "latencyMs", "createdAt") VALUES
        ('1', 'a', 'k', 'GET', 'GET /v2/pets/{petId}', 200, 3, '2026-11-23 10:00:00.100'),
        ('2', 'a', 'k', 'GET', 'GET /v2/pets/{petId}', 200, 5, '2026-11-23 10:00:00.900'),
        ('3', 'a', 'k', 'GET', 'GET /v2/pets/{petId}', 404, 1, '2026-11-23 10:00:00.500'),
        ('4', 'a', 'k', 'GET', 'GET /v2/pets/{petId}', 200, 2, '2026-11-23 10:00:01.000'),
        ('5', NULL, NULL, 'GET', 'UNMATCHED', 401, 0, '2026-11-23 10:00:02.000');`);
    await pg.exec(sqlOf(name));
    const rows = await pg.query<{ accountId: string | null; status: number; second: Date; calls: number; latencyMsSum: number; latencyMsMax: number }>(
      `SELECT "accountId", status, second, calls, "latencyMsSum", "latencyMsMax" FROM "ApiUsage" ORDER BY second, status`,
    );
    expect(rows.rows.map((r) => ({ ...r, second: r.second.toISOString() }))).toEqual([
      { accountId: "a", status: 200, second: "2026-11-23T10:00:00.000Z", calls: 2, latencyMsSum: 8, latencyMsMax: 5 },
      { accountId: "a", status: 404, second: "2026-11-23T10:00:00.000Z", calls: 1, latencyMsSum: 1, latencyMsMax: 1 },
      { accountId: "a", status: 200, second: "2026-11-23T10:00:01.000Z", calls: 1, latencyMsSum: 2, latencyMsMax: 2 },
      { accountId: null, status: 401, second: "2026-11-23T10:00:02.000Z", calls: 1, latencyMsSum: 0, latencyMsMax: 0 },
    ]);
    expect((await pg.query(`SELECT to_regclass('"ApiCall"') AS t`)).rows).toEqual([{ t: null }]);
  });

  it("pet_search_keys writes the entry of each pet whose usable images all hold a search key of one engine version", async () => {
    const name = migrations.find((m) => m.endsWith("_pet_search_keys"))!;
    const pg = await databaseBefore(name);
    opened.push(pg);
    await pg.exec(`
      INSERT INTO "Account" (id, name) VALUES ('a', 'A');
      INSERT INTO "CaptureSession" (id, "accountId", purpose, species, "expiresAt") VALUES ('s', 'a', 'PET_PROFILE_REGISTRATION', 'DOG', now());
      INSERT INTO "Pet" (id, "accountId", species, "updatedAt") VALUES ('ready', 'a', 'DOG', now()), ('no-key', 'a', 'DOG', now()), ('mixed', 'a', 'DOG', now());
      INSERT INTO "FingerprintImage" (id, "accountId", "sessionId", "petId", "filePath", "byteSize", usable, "searchKey", "engineVersion", "createdAt") VALUES
        ('r2', 'a', 's', 'ready', 'f', 0, true, '\\x0a0b', 12, '2026-12-01 10:00:02'),
        ('r1', 'a', 's', 'ready', 'f', 0, true, '\\x01', 12, '2026-12-01 10:00:01'),
        ('r3', 'a', 's', 'ready', 'f', 0, false, '\\xff', 12, '2026-12-01 10:00:03'),
        ('n1', 'a', 's', 'no-key', 'f', 0, true, '\\x01', 12, '2026-12-01 10:00:01'),
        ('n2', 'a', 's', 'no-key', 'f', 0, true, NULL, 12, '2026-12-01 10:00:02'),
        ('m1', 'a', 's', 'mixed', 'f', 0, true, '\\x01', 11, '2026-12-01 10:00:01'),
        ('m2', 'a', 's', 'mixed', 'f', 0, true, '\\x02', 12, '2026-12-01 10:00:02'),
        ('u1', 'a', 's', NULL, 'f', 0, true, '\\x01', 12, '2026-12-01 10:00:01');`);
    await pg.exec(sqlOf(name));
    const rows = await pg.query<{ petId: string; accountId: string; imageIds: string[]; engineVersion: number; keys: string }>(
      `SELECT "petId", "accountId", "imageIds", "engineVersion", encode(keys, 'hex') AS keys FROM "PetSearchKeys" ORDER BY "petId"`,
    );
    // Each key after its length (4 bytes, big-endian), oldest image first; the unusable image left out.
    expect(rows.rows).toEqual([{ petId: "ready", accountId: "a", imageIds: ["r1", "r2"], engineVersion: 12, keys: "0000000101" + "000000020a0b" }]);
  });
});
