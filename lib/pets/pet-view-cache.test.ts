import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openOwnedDatabase } from "@/lib/db";
import type { OpenDatabase } from "@/lib/db/connect";
import { createNotifiedCache } from "@/lib/db/notified-cache";
import { readEnv } from "@/lib/env";
import { createTestDatabase, type TestDatabase } from "@/lab/test-support/scale";
import { applyPetViewChange, getPetViewJsonOrThrow, PET_VIEW_CHANGE_CHANNEL, PET_VIEW_FLUSH, type CachedPetView } from "./pet-view-cache";
import type { PetView } from "./schemas";
import { petViewSelect, updatePet } from "./pets";

// What notifies the pet view cache (the triggers of prisma/migrations/*_pet_view_change_notifications),
// in both modes, and the cache's tenancy rule. Across two server processes: tests/server/cross-process.test.ts.

const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function open(mode: "pglite" | "postgres"): Promise<OpenDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-pet-views-"));
  let database: TestDatabase | undefined;
  if (mode === "postgres") database = await createTestDatabase("petviews");
  let db: OpenDatabase | undefined;
  cleanups.push(async () => {
    await db?.close();
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  db = await openOwnedDatabase(readEnv({ DATA_DIR: dir, ...(database ? { DATABASE_URL: database.url } : {}) } as unknown as NodeJS.ProcessEnv), "cli");
  return db;
}

describe.each(["pglite", "postgres"] as const)("pet view notifications (%s)", (mode) => {
  it("every change to what a view shows notifies its pet's id at commit, and nothing else does", async () => {
    const db = await open(mode);
    const p = db.prisma;
    const received: string[] = [];
    let live = false;
    db.notifications.listen(PET_VIEW_CHANGE_CHANNEL, { notify: (payload) => received.push(payload), live: (isLive) => (live = isLive) });
    for (let i = 0; i < 500 && !live; i++) await new Promise((r) => setTimeout(r, 10));
    expect(live).toBe(true);
    /** What `write` notified. PGlite: already delivered when the write returns (no barrier needed). */
    const notified = async (write: () => Promise<unknown>) => {
      received.length = 0;
      await write();
      if (mode === "postgres") await db.notifications.barrier();
      return [...new Set(received)];
    };

    const account = await p.account.create({ data: { name: "Views" } });
    let pet = { id: "" };
    expect(await notified(async () => (pet = await p.pet.create({ data: { accountId: account.id, species: "DOG" } })))).toEqual([]);
    expect(await notified(() => updatePet(p, account.id, pet.id, { metadata: "{}", breed: "Beagle" }))).toEqual([pet.id]);
    const pool = await p.searchPool.create({ data: { accountId: account.id, name: "p" } });
    expect(await notified(() => p.pet.update({ where: { id: pet.id }, data: { poolId: pool.id, activeAdditionJobId: "job" } }))).toEqual([]);

    const session = await p.captureSession.create({
      data: { accountId: account.id, species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet.id, expiresAt: new Date(Date.now() + 60_000) },
    });
    const image = (petId: string | null) => ({ accountId: account.id, sessionId: session.id, petId, filePath: "x.jpg", byteSize: 1, usable: true });
    let uploaded = { id: "" };
    expect(await notified(async () => (uploaded = await p.fingerprintImage.create({ data: image(null) })))).toEqual([]); // an upload: not enrolled
    expect(await notified(() => p.fingerprintImage.updateMany({ where: { id: uploaded.id }, data: { petId: pet.id } }))).toEqual([pet.id]); // enrolled by a job
    expect(await notified(() => p.fingerprintImage.update({ where: { id: uploaded.id }, data: { usable: false } }))).toEqual([]);
    expect(await notified(() => p.fingerprintImage.create({ data: image(pet.id) }))).toEqual([pet.id]);
    expect(await notified(() => p.$executeRawUnsafe(`TRUNCATE "FingerprintImage"`))).toEqual([PET_VIEW_FLUSH]);
    await p.fingerprintImage.create({ data: image(pet.id) });
    expect(await notified(() => p.fingerprintImage.deleteMany({ where: { petId: pet.id } }))).toEqual([pet.id]);
    await p.fingerprintImage.create({ data: image(pet.id) });
    expect(await notified(() => p.pet.delete({ where: { id: pet.id } }))).toEqual([pet.id]); // with its images, by cascade
    const other = await p.pet.create({ data: { accountId: account.id, species: "CAT" } });
    expect(await notified(() => p.account.delete({ where: { id: account.id } }))).toEqual([other.id]);
  });
});

describe("the Pet trigger's column list (prisma/migrations/*_pet_view_change_notifications)", () => {
  /** Pet columns no view shows: changing them notifies nothing. A column added to Pet must go here or into the trigger. */
  const NOT_IN_ANY_VIEW = ["activeAdditionJobId", "poolId", "updatedAt"];

  it("watches every Pet column a view reads, and every other column is named as one no view shows", async () => {
    const db = await open("pglite");
    const names = async (sql: string) => (await db.prisma.$queryRawUnsafe<{ name: string }[]>(sql)).map((row) => row.name).sort();
    const columns = await names(`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'Pet'`);
    const watched = await names(
      `SELECT event_object_column AS name FROM information_schema.triggered_update_columns WHERE event_object_table = 'Pet' AND trigger_name = 'Pet_notify_view_change'`,
    );
    const read = [...Object.keys(petViewSelect).filter((key) => key !== "_count"), "accountId"];
    expect(columns.length).toBeGreaterThan(read.length);
    expect(watched).toEqual(expect.arrayContaining(read));
    // A new Pet column fails here until it is watched (a migration that recreates the trigger) or listed above.
    expect([...watched, ...NOT_IN_ANY_VIEW].sort()).toEqual(columns);
  });
});

describe("pet view cache", () => {
  it("answers a view from memory to its own account only, and applies a notification", async () => {
    const db = await open("pglite");
    const p = db.prisma;
    const [a, b] = [await p.account.create({ data: { name: "A" } }), await p.account.create({ data: { name: "B" } })];
    const pet = await p.pet.create({ data: { accountId: a.id, species: "DOG", metadata: "1" } });
    const cache = createNotifiedCache<CachedPetView>({ ttlMs: 60_000, maxEntries: 10 });
    cache.setLive(true);
    const metadataOf = async (accountId: string) => (JSON.parse((await getPetViewJsonOrThrow(cache, p, accountId, pet.id)).text) as PetView).metadata;
    expect(await metadataOf(a.id)).toBe("1");
    await p.pet.update({ where: { id: pet.id }, data: { metadata: "2" } }); // no notification reaches this cache
    expect(await metadataOf(a.id)).toBe("1"); // from memory
    // Serialised once per entry: the same text object answers again from memory.
    expect(await getPetViewJsonOrThrow(cache, p, a.id, pet.id)).toBe(await getPetViewJsonOrThrow(cache, p, a.id, pet.id));
    await expect(getPetViewJsonOrThrow(cache, p, b.id, pet.id)).rejects.toMatchObject({ failure: "PetNotFound" });
    applyPetViewChange(cache, pet.id);
    expect(await metadataOf(a.id)).toBe("2");
    applyPetViewChange(cache, PET_VIEW_FLUSH);
    expect(cache.size()).toBe(0);
  });
});
