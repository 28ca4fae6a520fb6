import type { Species } from "@/lib/generated/prisma/enums";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "@/lib/db/connect";
import * as engine from "@/lib/engine";
import { packedKeys, shutdownEngine, type PackedPets, type ShardedPets } from "@/lib/engine";
import { enrolledSearchKeysByPet, extractionFor } from "@/lib/jobs/templates";
import { noseCapture } from "@/lab/test-support/nose-images";
import { openTestDatabase } from "@/lab/test-support/database";
import { registerByJob } from "@/lab/test-support/registration";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { GalleryManager, type GalleryEngine } from "./gallery-manager";
import { GallerySnapshots } from "./gallery-snapshots";
import { galleryBatchAfter, writePetSearchKeys, type GalleryScope } from "./gallery-rows";

// A gallery is loaded by one SQL query a batch (galleryBatchAfter): it must read exactly what the per-image reader
// (enrolledSearchKeysByPet) reads, pet by pet, for the pets of the scope only, and a pet registered through a job is
// found by the manager that loaded it this way.

let open: OpenDatabase;
let close: () => Promise<void>;
let accountId: string;
let otherAccountId: string;

beforeAll(async () => {
  ({ open, close } = await openTestDatabase("pglite", "gallery_rows"));
  accountId = (await open.prisma.account.create({ data: { name: "Rows clinic" } })).id;
  otherAccountId = (await open.prisma.account.create({ data: { name: "Other clinic" } })).id;
}, 120_000);

afterAll(async () => {
  await shutdownEngine();
  await close?.();
});

/** A pet registered by a registration job (the enrolment path) from synthetic dog `seed`'s `captures`. */
async function register(account: string, seed: number, captures: number[], pet: { species?: Species; poolId?: string } = {}): Promise<string> {
  const { petId, jobId } = await registerByJob(open.prisma, account, seed, captures, pet);
  expect((await open.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe("SUCCESS");
  return petId;
}

/** A batch's pets, each with its shard's pets and its place among them, in id order (a batch is dealt to shards). */
function petsOf(batch: ShardedPets): { petId: string; shard: PackedPets; i: number }[] {
  const pets = batch.shards.flatMap((shard) => shard.petIds.map((petId, i) => ({ petId, shard, i })));
  return pets.sort((a, b) => (a.petId < b.petId ? -1 : 1));
}

/** Every pet of the scope, read in batches of `limit`; each batch's pets after the previous batch's last. */
async function readAll(scope: GalleryScope, limit: number) {
  const pets: { petId: string; templates: Uint8Array[] }[] = [];
  for (let batch = await galleryBatchAfter(open.prisma, scope, "", limit); batch; batch = await galleryBatchAfter(open.prisma, scope, batch.last, limit)) {
    const read = petsOf(batch.pets);
    expect(read.length).toBeLessThanOrEqual(limit);
    expect(read[0].petId > (pets.at(-1)?.petId ?? "")).toBe(true);
    expect(read.at(-1)!.petId).toBe(batch.last);
    for (const { petId, shard, i } of read) pets.push({ petId, templates: packedKeys(shard, i) });
  }
  return pets;
}

const hex = (keys: Uint8Array[]) => keys.map((key) => Buffer.from(key).toString("hex"));

describe("gallery rows", () => {
  it("reads each pet of the scope once, in id order, with the search keys the per-image reader gives; a pet found after loading", async () => {
    const db = open.prisma;
    const pool = await db.searchPool.create({ data: { accountId, name: "Shelter" } });
    const dogs = [await register(accountId, 801, [0, 1, 2, 3, 4]), await register(accountId, 802, [0, 1, 2, 3, 4]), await register(accountId, 803, [0, 1, 2, 3], { poolId: pool.id })];
    const cat = await register(accountId, 804, [0, 1, 2, 3, 4], { species: "CAT" });
    await register(otherAccountId, 805, [0, 1, 2, 3, 4]);
    // A pet with no enrolled image is in no gallery.
    await db.pet.create({ data: { accountId, species: "DOG" } });

    // Each registration wrote its pet's gallery entry: its usable images, in enrolment order.
    for (const dog of dogs) {
      const images = await db.fingerprintImage.findMany({ where: { petId: dog, usable: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
      expect((await db.petSearchKeys.findUniqueOrThrow({ where: { petId: dog } })).imageIds).toEqual(images.map((image) => image.id));
    }
    // A pet enrolled before registrations stored search keys and entries: its keys cut from the templates when loaded,
    // and stored, and its entry written.
    const old = await db.fingerprintImage.findFirstOrThrow({ where: { petId: dogs[1] }, orderBy: { createdAt: "asc" } });
    await db.fingerprintImage.update({ where: { id: old.id }, data: { searchKey: null } });
    await db.petSearchKeys.delete({ where: { petId: dogs[1] } });

    const everyDog = await readAll({ accountId, poolId: null, species: "DOG" }, 2);
    expect(everyDog.map((pet) => pet.petId)).toEqual([...dogs].sort());
    const before = await enrolledSearchKeysByPet(db, accountId, dogs);
    for (const pet of everyDog) {
      expect(pet.templates.length).toBeGreaterThanOrEqual(3);
      expect(hex(pet.templates)).toEqual(hex(before.get(pet.petId)!));
    }
    expect((await db.fingerprintImage.findUniqueOrThrow({ where: { id: old.id } })).searchKey).not.toBeNull();
    expect((await db.petSearchKeys.findUniqueOrThrow({ where: { petId: dogs[1] } })).imageIds).toContain(old.id);

    // Each pet is dealt to the shard that holds it in every gallery: taken out of one by id, each is found there.
    for (let batch = await galleryBatchAfter(db, { accountId, poolId: null, species: "DOG" }, "", 2); batch; batch = await galleryBatchAfter(db, { accountId, poolId: null, species: "DOG" }, batch.last, 2)) {
      await engine.galleryUpsertPets("rows-test", batch.pets);
    }
    for (const dog of dogs) expect(await engine.galleryRemovePet("rows-test", dog)).toBe(true);
    await engine.galleryDrop("rows-test");
    await expect(engine.galleryUpsertPets("rows-test", { shards: [] })).rejects.toThrow(/dealt to 0 shards/);

    expect((await readAll({ accountId, poolId: pool.id, species: "DOG" }, 1000)).map((pet) => pet.petId)).toEqual([dogs[2]]);
    expect((await readAll({ accountId, poolId: null, species: "CAT" }, 1000)).map((pet) => pet.petId)).toEqual([cat]);

    // Loaded through the manager by this path, the registered dog is found from new photos, first.
    const probe: Uint8Array[] = [];
    for (const capture of [5, 6, 7]) {
      const analysis = await engine.analyseImage(await noseCapture(802, capture), extractionFor("PET_IDENTIFICATION"));
      if (analysis.ok && analysis.template) probe.push(analysis.template);
    }
    const manager = new GalleryManager(db);
    const scope: GalleryScope = { accountId, poolId: null, species: "DOG" };
    expect((await manager.stats(scope)).pets).toBe(3);
    expect((await manager.identify(scope, probe)).candidates[0]?.petId).toBe(dogs[1]);
    await manager.dropAll();

    // A snapshot folder that cannot be written (here under a file): the gallery loads from the database and serves,
    // and the failed save is not tried again at every search.
    class CountedSnapshots extends GallerySnapshots {
      attempts = 0;
      override prepare(gallery: string, shards: number) {
        this.attempts++;
        return super.prepare(gallery, shards);
      }
    }
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gallery-rows-")), "a-file");
    fs.writeFileSync(file, "");
    const unwritable = new CountedSnapshots(path.join(file, "galleries"));
    const failing = new GalleryManager(db, engine, unwritable);
    expect((await failing.stats(scope)).pets).toBe(3);
    await failing.snapshotsSaved();
    expect(unwritable.attempts).toBe(1);
    expect((await failing.identify(scope, probe)).candidates[0]?.petId).toBe(dogs[1]);
    await failing.snapshotsSaved();
    expect(unwritable.attempts).toBe(1);
    await failing.dropAll();

    // A save overtaken by a change to the gallery (as the engine reports it) is tried again at the next search; after
    // three in a row the next waits.
    const overtaking = (overtakes: number) => {
      const counts = { attempts: 0 };
      const counted: GalleryEngine = {
        ...engine,
        gallerySave: (key, paths) => {
          counts.attempts++;
          if (overtakes-- > 0) return Promise.reject(new engine.SnapshotChangedError("the gallery changed while it was saved"));
          return engine.gallerySave(key, paths);
        },
      };
      return { counts, counted };
    };
    const snapshots = new GallerySnapshots(fs.mkdtempSync(path.join(os.tmpdir(), "gallery-rows-snapshots-")));
    const search = async (manager: GalleryManager) => {
      expect((await manager.identify(scope, probe)).candidates[0]?.petId).toBe(dogs[1]);
      await manager.snapshotsSaved();
    };
    const twice = overtaking(2);
    const retrying = new GalleryManager(db, twice.counted, snapshots);
    for (let i = 0; i < 4; i++) await search(retrying);
    expect(twice.counts.attempts).toBe(3);
    expect(await snapshots.manifest(`${accountId}/*/DOG`)).toMatchObject({ pets: 3 });
    await retrying.dropAll();
    fs.rmSync(snapshots.dir, { recursive: true, force: true });
    const always = overtaking(Infinity);
    const waiting = new GalleryManager(db, always.counted, snapshots);
    for (let i = 0; i < 5; i++) await search(waiting);
    expect(always.counts.attempts).toBe(3);
    await waiting.dropAll();
  }, 300_000);
});

describe("a pet's gallery entry", () => {
  it("is what a load reads while it is of the pet's usable images and engine version, and is written anew when not", async () => {
    const db = open.prisma;
    const account = (await db.account.create({ data: { name: "Entry clinic" } })).id;
    const dog = await register(account, 806, [0, 1, 2, 3, 4]);
    const scope: GalleryScope = { accountId: account, poolId: null, species: "DOG" };
    const keys = (await enrolledSearchKeysByPet(db, account, [dog])).get(dog)!;
    expect(keys.length).toBeGreaterThanOrEqual(4);
    const read = async () => hex((await readAll(scope, 10)).find((pet) => pet.petId === dog)!.templates);
    expect(await read()).toEqual(hex(keys));
    // An entry of the same images is taken as it is stored (here, made to hold the first key only).
    const entry = await db.petSearchKeys.findUniqueOrThrow({ where: { petId: dog } });
    const first = Buffer.concat([Buffer.from(Uint32Array.of(0).buffer), keys[0]]);
    first.writeUInt32BE(keys[0].length, 0);
    await db.petSearchKeys.update({ where: { petId: dog }, data: { keys: first } });
    expect(await read()).toEqual(hex(keys.slice(0, 1)));
    // An entry of another engine version is not: the load gives the images' keys and writes the entry again.
    await db.petSearchKeys.update({ where: { petId: dog }, data: { engineVersion: engine.ENGINE_VERSION - 1 } });
    expect(await read()).toEqual(hex(keys));
    expect(Buffer.from((await db.petSearchKeys.findUniqueOrThrow({ where: { petId: dog } })).keys).equals(Buffer.from(entry.keys))).toBe(true);
    // Nor is an entry that still holds an image the pet no longer has.
    await db.petSearchKeys.update({ where: { petId: dog }, data: { keys: first } });
    await db.fingerprintImage.update({ where: { id: entry.imageIds[1] }, data: { usable: false } });
    expect(await read()).toEqual(hex([keys[0], ...keys.slice(2)]));
    expect((await db.petSearchKeys.findUniqueOrThrow({ where: { petId: dog } })).imageIds).toEqual([entry.imageIds[0], ...entry.imageIds.slice(2)]);
    // A deleted pet's entry goes with it.
    await db.pet.delete({ where: { id: dog } });
    expect(await db.petSearchKeys.findUnique({ where: { petId: dog } })).toBeNull();
  }, 120_000);
});

// The embedded database's batches are read in binary (lib/db/binary-rows.ts), PostgreSQL's too: both give each
// pet's stored keys, in enrolment order, byte for byte.
/** Pet i's byte strings in a batch, each after its length (the packing alone: these keys are not real search keys). */
function lengthPrefixed(pets: PackedPets, i: number): Uint8Array[] {
  const bytes = Buffer.from(pets.bytes.buffer, pets.bytes.byteOffset, pets.bytes.byteLength);
  const keys: Uint8Array[] = [];
  for (let at = i === 0 ? 0 : pets.ends[i - 1]; at < pets.ends[i]; at += 4 + bytes.readUInt32BE(at)) keys.push(bytes.subarray(at + 4, at + 4 + bytes.readUInt32BE(at)));
  return keys;
}

describe.each(["pglite", "postgres"] as const)("a gallery batch's packed keys (%s)", (mode) => {
  it("are the stored search keys of each pet's usable images, in the order they were added, after their lengths", async () => {
    const database = await openTestDatabase(mode, "gallery_batch_bytes");
    try {
      const db = database.open.prisma;
      const account = await db.account.create({ data: { name: "Bytes clinic" } });
      const session = await db.captureSession.create({
        data: { accountId: account.id, purpose: "PET_PROFILE_REGISTRATION", species: "DOG", expiresAt: new Date(Date.now() + 3600_000) },
      });
      // Keys of several sizes (one past PGlite's output chunks), one an image that is not usable, one pet of a cat.
      const keysOf = (pet: number) => Array.from({ length: 1 + (pet % 3) }, (_, k) => Uint8Array.from({ length: 17 + 9_000 * k + pet }, (_, i) => (i * 31 + pet * 7 + k) & 255));
      const pets = Array.from({ length: 7 }, (_, pet) => `pet-${pet}`);
      await db.pet.createMany({ data: pets.map((id, pet) => ({ id, accountId: account.id, species: pet === 6 ? ("CAT" as const) : ("DOG" as const) })) });
      for (const [pet, petId] of pets.entries()) {
        for (const [k, key] of keysOf(pet).entries()) {
          await db.fingerprintImage.create({
            data: {
              accountId: account.id,
              sessionId: session.id,
              petId,
              filePath: "images/none.jpg",
              byteSize: 0,
              usable: true,
              searchKey: Buffer.from(key),
              engineVersion: engine.ENGINE_VERSION,
              createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, pet, 100 * (3 - k))),
            },
          });
        }
        await db.fingerprintImage.create({
          data: { accountId: account.id, sessionId: session.id, petId, filePath: "images/none.jpg", byteSize: 0, usable: false, searchKey: Buffer.from([1, 2, 3]), engineVersion: engine.ENGINE_VERSION },
        });
      }
      // The pets' entries, as registrations write them (these keys are not real search keys: a load cannot cut them).
      await writePetSearchKeys(db, account.id, pets);
      const scope: GalleryScope = { accountId: account.id, poolId: null, species: "DOG" };
      const read: { petId: string; keys: string[] }[] = [];
      for (let batch = await galleryBatchAfter(db, scope, "", 4); batch; batch = await galleryBatchAfter(db, scope, batch.last, 4)) {
        for (const { petId, shard, i } of petsOf(batch.pets)) read.push({ petId, keys: hex(lengthPrefixed(shard, i)) });
      }
      // Each pet's keys were added last first (createdAt): the batch gives them oldest first.
      expect(read).toEqual(pets.slice(0, 6).map((petId, pet) => ({ petId, keys: hex(keysOf(pet).reverse()) })));
    } finally {
      await database.close();
    }
  }, 120_000);
});
