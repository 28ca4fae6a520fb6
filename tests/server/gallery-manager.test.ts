import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type OpenDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import type { RhinariumClient } from "@rhinarium/sdk";
import * as engine from "@/lib/engine";
import { shutdownEngine } from "@/lib/engine";
import { noseCapture } from "@/lab/test-support/nose-images";
import { apiClient, createTestDatabase, probeSession, registerPet, type TestDatabase } from "@/lab/test-support/scale";
import { buildOnce, ops, startServer, type TestServer } from "@/lab/test-support/server";
import { Prisma } from "@/lib/generated/prisma/client";
import { currentTemplates, enrolledLightTemplatesByPet, enrolledTemplatesByPet, extractionFor, imageRows } from "@/lib/jobs/templates";
import { DESCRIPTOR_SETS, MATCHED_SETS } from "@/lib/biometrics/parameters";
import { descriptorSetCount, deserializeTemplate } from "@/lib/biometrics/template";
import { GalleryManager, galleryKey, type GalleryEngine, type GalleryScope } from "@/lib/galleries/gallery-manager";
import { galleryPetCount } from "@/lib/galleries/gallery-rows";
import { GallerySnapshots } from "@/lib/galleries/gallery-snapshots";
import os from "node:os";
import path from "node:path";

// This test process holds galleries (as a worker does) while another process, the real server, enrols,
// deletes and moves pets through its API and the ops CLI: the next identification here must see each
// change without reloading the gallery.

let database: TestDatabase;
let server: TestServer;
let db: OpenDatabase;
let client: RhinariumClient;
let accountId: string;

beforeAll(async () => {
  await buildOnce();
  database = await createTestDatabase("gallery");
  server = await startServer({ databaseUrl: database.url });
  const account = await ops(server.env, "account:create", "--name", "Gallery clinic", "--plan", "standard");
  accountId = account.accountId as string;
  client = apiClient(server.baseUrl, account.apiKey as string);
  db = await openDatabase(readEnv({ DATABASE_URL: database.url, DATA_DIR: server.dataDir } as unknown as NodeJS.ProcessEnv));
  // Re-extraction here reads the image files the server stored.
  process.env.DATA_DIR = server.dataDir;
}, 600_000);

afterAll(async () => {
  await shutdownEngine();
  await db?.close();
  await server?.stop();
  await database?.drop();
  if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
});

/** New photos of synthetic pet `seed`, analysed by the engine in this process as a 1:N probe's are. */
async function probe(seed: number): Promise<Uint8Array[]> {
  const templates: Uint8Array[] = [];
  for (const i of [5, 6, 7]) {
    const analysis = await engine.analyseImage(await noseCapture(seed, i), extractionFor("PET_IDENTIFICATION"));
    if (analysis.ok && analysis.template) templates.push(analysis.template);
  }
  return templates;
}

async function found(manager: GalleryManager, scope: GalleryScope, seed: number): Promise<string[]> {
  return (await manager.identify(scope, await probe(seed))).candidates.map((c) => c.petId);
}

describe("gallery manager, with another process changing pets", () => {
  it("finds a pet enrolled elsewhere and stops finding one deleted elsewhere, without reloading", async () => {
    const rex = await registerPet(client, 501);
    const max = await registerPet(client, 502);
    const manager = new GalleryManager(db.prisma);
    const all: GalleryScope = { accountId, poolId: null, species: "DOG" };

    expect(await found(manager, all, 501)).toEqual([rex]);
    expect(await found(manager, all, 502)).toEqual([max]);
    expect(await manager.stats(all)).toMatchObject({ loaded: true, pets: 2 });
    const loads = await db.prisma.galleryChange.count({ where: { accountId } });

    // Enrolled by the server's job runner after this process loaded the gallery.
    const bella = await registerPet(client, 503);
    expect(await db.prisma.galleryChange.count({ where: { accountId } })).toBe(loads + 1);
    expect(await found(manager, all, 503)).toEqual([bella]);
    expect(await manager.stats(all)).toMatchObject({ pets: 3 });

    // Deleted through the server's API.
    await client.deletePet(rex);
    expect(await found(manager, all, 501)).toEqual([]);
    expect(await found(manager, all, 502)).toEqual([max]);
    expect(await manager.stats(all)).toMatchObject({ pets: 2 });

    // A second manager (another process) loading now sees the same gallery.
    const fresh = new GalleryManager(db.prisma);
    expect(await fresh.stats(all)).toMatchObject({ pets: 2 });
    await fresh.dropAll();
    expect(await manager.stats(all)).toMatchObject({ pets: 2 });
  });

  it("reads the light comparison's templates from their own column, cut once and cut again after re-extraction", async () => {
    const pet = await registerPet(client, 505);
    const light = (await enrolledLightTemplatesByPet(db.prisma, accountId, [pet])).get(pet)!;
    const rows = () =>
      db.prisma.fingerprintImage.findMany({ where: { petId: pet, usable: true }, orderBy: { createdAt: "asc" }, select: { id: true, template: true, lightTemplate: true } });
    const stored = await rows();
    expect(light).toHaveLength(stored.length);
    stored.forEach((row, i) => {
      expect(Buffer.from(row.lightTemplate!).equals(Buffer.from(light[i]))).toBe(true);
      expect(Buffer.from(row.lightTemplate!).equals(Buffer.from(engine.lightTemplateOf(new Uint8Array(row.template!))))).toBe(true);
      expect(row.lightTemplate!.length).toBeLessThan(row.template!.length / 2.5);
    });

    // A template of an older engine version is re-extracted; the light template cut from the old one goes with it.
    await db.prisma.fingerprintImage.update({ where: { id: stored[0].id }, data: { engineVersion: engine.ENGINE_VERSION - 1, lightTemplate: Buffer.from([1, 2, 3]) } });
    const again = (await enrolledLightTemplatesByPet(db.prisma, accountId, [pet])).get(pet)!;
    const [first] = await rows();
    expect(Buffer.from(again[0]).equals(Buffer.from(engine.lightTemplateOf(new Uint8Array(first.template!))))).toBe(true);
    expect(Buffer.from(first.lightTemplate!).equals(Buffer.from(again[0]))).toBe(true);
    // Re-extracted by another path first (verification reads whole templates): the stale cuts are cleared, not kept
    // as if current.
    await db.prisma.fingerprintImage.update({ where: { id: stored[1].id }, data: { engineVersion: engine.ENGINE_VERSION - 1, lightTemplate: Buffer.from([1, 2, 3]), searchKey: Buffer.from([4, 5, 6]) } });
    await enrolledTemplatesByPet(db.prisma, accountId, [pet]);
    const cleared = await db.prisma.fingerprintImage.findUniqueOrThrow({ where: { id: stored[1].id }, select: { engineVersion: true, lightTemplate: true, searchKey: true } });
    expect(cleared).toEqual({ engineVersion: engine.ENGINE_VERSION, lightTemplate: null, searchKey: null });
    // Another account's pets are not read.
    expect((await enrolledLightTemplatesByPet(db.prisma, "another-account", [pet])).size).toBe(0);
  });

  it("keeps the light templates it read in memory, for rows of this engine version only, and never answers a deleted image", async () => {
    const pet = await registerPet(client, 507);
    const rows = await db.prisma.fingerprintImage.findMany({ where: { petId: pet, usable: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], select: { id: true, template: true } });
    const first = (await enrolledLightTemplatesByPet(db.prisma, accountId, [pet])).get(pet)!;
    expect(first).toHaveLength(rows.length);
    // A current row's light template never changes: the second read answers from memory, not from the column.
    await db.prisma.fingerprintImage.update({ where: { id: rows[0].id }, data: { lightTemplate: Buffer.from([9, 9, 9]) } });
    const second = (await enrolledLightTemplatesByPet(db.prisma, accountId, [pet])).get(pet)!;
    expect(second.map((part) => Buffer.from(part).toString("base64"))).toEqual(first.map((part) => Buffer.from(part).toString("base64")));
    // A row of an older version is cut again from its re-extracted template, whatever the memory held.
    await db.prisma.fingerprintImage.update({ where: { id: rows[0].id }, data: { engineVersion: engine.ENGINE_VERSION - 1 } });
    const third = (await enrolledLightTemplatesByPet(db.prisma, accountId, [pet])).get(pet)!;
    const refreshed = await db.prisma.fingerprintImage.findUniqueOrThrow({ where: { id: rows[0].id }, select: { template: true, lightTemplate: true } });
    expect(Buffer.from(third[0]).equals(Buffer.from(engine.lightTemplateOf(new Uint8Array(refreshed.template!))))).toBe(true);
    expect(Buffer.from(refreshed.lightTemplate!).equals(Buffer.from(third[0]))).toBe(true);
    // A deleted image is not answered from memory, nor an image of a pet the call does not ask for.
    await db.prisma.fingerprintImage.delete({ where: { id: rows[1].id } });
    const fourth = (await enrolledLightTemplatesByPet(db.prisma, accountId, [pet])).get(pet)!;
    expect(fourth).toHaveLength(rows.length - 1);
    expect(fourth.map((part) => Buffer.from(part).toString("base64"))).toEqual([third[0], ...third.slice(2)].map((part) => Buffer.from(part).toString("base64")));
    expect((await enrolledLightTemplatesByPet(db.prisma, "another-account", [pet])).size).toBe(0);
  });

  it("stores an identification session's images with the outer frames that 1:N lookups read, any other without", async () => {
    const frames = (rows: { template: Uint8Array | null }[]) => rows.flatMap((r) => (r.template ? [descriptorSetCount(deserializeTemplate(new Uint8Array(r.template)))] : []));
    const imagesOf = (where: { petId?: string; sessionId?: string }) =>
      imageRows(db.prisma, where.petId ? Prisma.sql`"petId" = ${where.petId}` : Prisma.sql`"sessionId" = ${where.sessionId}`);
    const pet = await registerPet(client, 506);
    // The rows as Prisma reads them, bytea and JSON included, in the order they were added.
    const byPrisma = await db.prisma.fingerprintImage.findMany({
      where: { petId: pet },
      select: { id: true, filePath: true, usable: true, template: true, engineVersion: true, quality: true, petId: true, turnedViews: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    const bySql = await imagesOf({ petId: pet });
    const base64 = (bytes: Uint8Array | null) => (bytes ? Buffer.from(bytes).toString("base64") : null);
    expect(bySql.map((row) => ({ ...row, template: base64(row.template), turnedViews: base64(row.turnedViews) }))).toEqual(
      byPrisma.map((row) => ({ ...row, template: base64(row.template), turnedViews: base64(row.turnedViews) })),
    );
    expect(bySql[0].quality).toHaveProperty("score");
    const enrolled = frames(bySql);
    expect(enrolled.length).toBeGreaterThanOrEqual(3);
    expect(new Set(enrolled)).toEqual(new Set([MATCHED_SETS]));
    const verification = frames(await imagesOf({ sessionId: await probeSession(client, 506, "PET_VERIFICATION", pet) }));
    expect(new Set(verification)).toEqual(new Set([MATCHED_SETS]));
    const identification = await probeSession(client, 506, "PET_IDENTIFICATION");
    const probes = await imagesOf({ sessionId: identification });
    expect(frames(probes).length).toBeGreaterThanOrEqual(2);
    expect(new Set(frames(probes))).toEqual(new Set([DESCRIPTOR_SETS]));
    // Only the identification's usable images carry their quarter-turned views (decision 0042): three templates each.
    const viewCounts = (rows: { usable: boolean; template: Uint8Array | null; turnedViews: Uint8Array | null }[]) =>
      rows.filter((r) => r.usable && r.template).map((r) => (r.turnedViews ? engine.splitTemplates(r.turnedViews).length : 0));
    expect(new Set(viewCounts(probes))).toEqual(new Set([3]));
    expect(bySql.every((row) => row.turnedViews === null)).toBe(true);

    // An identification job re-extracts a stale probe image (an older engine version's) with them again.
    const stale = probes.map((row) => ({ ...row, engineVersion: engine.ENGINE_VERSION - 1 }));
    const refreshed = await currentTemplates(db.prisma, stale, extractionFor("PET_IDENTIFICATION"));
    expect(new Set(frames(refreshed))).toEqual(new Set([DESCRIPTOR_SETS]));
    expect(new Set(viewCounts(refreshed))).toEqual(new Set([3]));
    const asVerification = await currentTemplates(db.prisma, stale, extractionFor("PET_VERIFICATION"));
    expect(new Set(frames(asVerification))).toEqual(new Set([MATCHED_SETS]));
    expect(new Set(viewCounts(asVerification))).toEqual(new Set([0]));
    const job = await client.waitForIdentification((await client.identifyPet(identification)).jobId);
    expect(job.status).toBe("SUCCESS");
    expect(job.pets?.[0]?.id).toBe(pet);
  });

  it("restores a gallery from its snapshot after a restart, with the changes made since; loads from the database when the snapshot is unusable", async () => {
    const all: GalleryScope = { accountId, poolId: null, species: "DOG" };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gallery-snapshots-"));
    const snapshots = new GallerySnapshots(dir);
    /** The engine, counting the shards restored and the pets indexed from keys. */
    const counting = () => {
      const counts = { restores: 0, indexed: 0 };
      const counted: GalleryEngine = {
        ...engine,
        galleryRestore: (key, paths) => (counts.restores++, engine.galleryRestore(key, paths)),
        galleryUpsertPets: (key, pets) => ((counts.indexed += engine.packedPetCount(pets)), engine.galleryUpsertPets(key, pets)),
      };
      return { counts, counted };
    };
    /** The gallery's snapshot once one other than `previous` is published (saves run in the background). */
    const published = async (previous?: string) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const manifest = await snapshots.manifest(galleryKey(all));
        if (manifest && manifest.generation !== previous) return manifest;
        if (Date.now() > deadline) throw new Error("no snapshot saved");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const gone = await registerPet(client, 511);
    const kept = await registerPet(client, 512);
    const first = counting();
    const before = new GalleryManager(db.prisma, first.counted, snapshots);
    expect(await found(before, all, 512)).toEqual([kept]);
    expect(first.counts.restores).toBe(0);
    const manifest = await published();
    expect(manifest).toMatchObject({ engineVersion: engine.ENGINE_VERSION, shards: engine.engineThreads(), pets: await galleryPetCount(db.prisma, all) });
    await before.dropAll();

    // Changed by the server after the snapshot: one pet enrolled, one deleted.
    const late = await registerPet(client, 513);
    await client.deletePet(gone);
    const second = counting();
    const after = new GalleryManager(db.prisma, second.counted, snapshots);
    expect(await found(after, all, 513)).toEqual([late]);
    expect(await found(after, all, 511)).toEqual([]);
    expect(await found(after, all, 512)).toEqual([kept]);
    expect(second.counts.restores).toBe(1);
    // Only the two changed pets were indexed from their keys (the deleted one as a removal).
    expect(second.counts.indexed).toBe(2);
    expect((await after.stats(all)).pets).toBe(await galleryPetCount(db.prisma, all));
    await after.dropAll();

    // Shards cut short: the gallery is loaded from the database instead, with the same answers.
    for (const shard of snapshots.shardPaths(galleryKey(all), manifest.generation, manifest.shards)) fs.truncateSync(shard, 1000);
    const third = counting();
    const damaged = new GalleryManager(db.prisma, third.counted, snapshots);
    expect(await found(damaged, all, 513)).toEqual([late]);
    expect(third.counts.restores).toBe(1);
    expect(third.counts.indexed).toBe(await galleryPetCount(db.prisma, all));
    // Saved again, and the damaged shards removed.
    const fresh = await published(manifest.generation);
    expect(fs.readdirSync(dir).filter((name) => name.endsWith(".shard"))).toHaveLength(fresh.shards);
    await damaged.dropAll();

    // A snapshot newer than the database (restored from an earlier backup) is not restored.
    const manifestFile = path.join(dir, `${Buffer.from(galleryKey(all)).toString("base64url")}.json`);
    fs.writeFileSync(manifestFile, JSON.stringify({ ...fresh, cursor: "999999999999" }));
    const fourth = counting();
    const behind = new GalleryManager(db.prisma, fourth.counted, snapshots);
    expect(await found(behind, all, 512)).toEqual([kept]);
    expect(fourth.counts.restores).toBe(0);
    await behind.dropAll();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("moves a pet between search pools' galleries when the ops CLI moves it", async () => {
    const luna = await registerPet(client, 504);
    const manager = new GalleryManager(db.prisma);
    await ops(server.env, "pool:create", "--account", accountId, "--name", "shelter", "--pets", luna);
    const shelter = await db.prisma.searchPool.findUniqueOrThrow({ where: { accountId_name: { accountId, name: "shelter" } } });
    const shelterScope: GalleryScope = { accountId, poolId: shelter.id, species: "DOG" };
    expect(await found(manager, shelterScope, 504)).toEqual([luna]);
    expect(await manager.stats(shelterScope)).toMatchObject({ pets: 1 });

    await ops(server.env, "pool:create", "--account", accountId, "--name", "clinic", "--pets", luna);
    expect(await found(manager, shelterScope, 504)).toEqual([]);
    expect(await manager.stats(shelterScope)).toMatchObject({ pets: 0 });
    // The default pool holds every pet, whatever its named pool.
    expect(await found(manager, { accountId, poolId: null, species: "DOG" }, 504)).toEqual([luna]);
    // A gallery without pets (no cat enrolled, a pool emptied) finds nobody.
    expect(await found(manager, { accountId, poolId: null, species: "CAT" }, 504)).toEqual([]);
    expect(await manager.stats({ accountId, poolId: null, species: "CAT" })).toMatchObject({ pets: 0 });
  });
});
