import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { recordGalleryChanges } from "@/lib/galleries/gallery-changes";
import { GallerySnapshots } from "@/lib/galleries/gallery-snapshots";
import { GalleryManager, type GalleryScope } from "@/lib/galleries/gallery-manager";
import { galleryBatchAfter, writePetSearchKeys } from "@/lib/galleries/gallery-rows";
import { ENGINE_VERSION, galleryTotals, packedPetCount, lightTemplateOf, searchKeyOfTemplate, shutdownEngine } from "@/lib/engine";
import { enrolledLightTemplatesByPet, forgetLightTemplates, writeImageBytes } from "@/lib/jobs/templates";
import { newCuid } from "@/lib/db/ids";
import type { Db } from "@/lib/db/connect";
import { analyzeChangedTables } from "@/lib/db/embedded-statistics";
import { Prisma } from "@/lib/generated/prisma/client";
import { Rng } from "@/lab/synth/prng";
import { openTestDatabase } from "@/lab/test-support/database";
import { distractorMix, prepareTemplates, type IdentificationBenchOptions } from "./identification";
import { postgresPids, processCpuMicros } from "./api-load";
import { cpuMsSince, quantile } from "./stats";

// The identification path of a worker end to end, on PostgreSQL or PGlite: enrolled pets are rows with their
// templates, as registration jobs leave them; the gallery manager loads the gallery from the database,
// and each identification fetches its shortlist's templates from the database.

/**
 * Pets written as registrations write them; a larger gallery's other pets are copies of their distractor pets' rows
 * (copyDistractorPets), which the database makes in minutes rather than the hours registering them would take.
 */
const WRITTEN_PETS = 5000;

export interface GalleryLoadResult {
  mode: "postgres" | "pglite";
  pets: number;
  /** Pets that are copies of the written pets' distractors (their rows copied by SQL); 0 when every pet was written. */
  copied: number;
  templateRows: number;
  templateBytes: number;
  searchKeyBytes: number;
  loadMs: number;
  /**
   * CPU time of the preload (user + system, every thread), ms: this process's (the engine threads, and PGlite, which
   * runs in it) and PostgreSQL's (every postgres process of the machine, so also other clients' at the time).
   */
  loadCpuMs: number;
  loadPostgresCpuMs: number;
  /**
   * A restarted process's preload from the galleries' snapshots on disk (decision 0041), saved by the first preload:
   * ms, and CPU of this process and PostgreSQL's, as for the first.
   */
  restartMs: number;
  restartCpuMs: number;
  restartPostgresCpuMs: number;
  /** Reading every pet's gallery data from the database alone (galleryBatchAfter, batches of LOAD_BATCH_PETS), no engine. */
  readMs: number;
  /** Searching the loaded gallery; null for a gallery of copies (WRITTEN_PETS). */
  search: GallerySearchFigures | null;
}

export interface GallerySearchFigures {
  p50: number;
  p95: number;
  rank1: number;
  /** Animals never enrolled (every one takes the deep pass, reading its candidates' light templates from the database). */
  unknownP50: number;
  unknownP95: number;
  /** Unknown animals that matched nobody (the right answer). */
  nobody: number;
  /** Reading 368 pets' light templates (what one deep pass reads), median: from the database, and again (from memory). */
  lightReadMs: number;
  lightReadAgainMs: number;
  /** An identification right after another process enrolled a pet: the change is applied first. */
  afterChangeMs: number;
}

/**
 * Copies of the account's written distractor pets (every pet but `genuineIds`), until the account holds `pets`: each
 * copy's pet, image rows (without the whole template, which only a full comparison reads) and gallery entry, made by
 * the database. A copy's id is its source's with `-c` and the round; its images keep their order.
 */
async function copyDistractorPets(db: Db, accountId: string, genuineIds: string[], pets: number, log: (line: string) => void): Promise<void> {
  const sources = await db.pet.count({ where: { accountId, id: { notIn: genuineIds } } });
  for (let round = 1, held = await db.pet.count({ where: { accountId } }); held < pets; round++) {
    const suffix = `-c${round}`;
    const take = Math.min(sources, pets - held);
    await db.$transaction(async (tx) => {
      const source = Prisma.sql`SELECT id FROM "Pet" WHERE "accountId" = ${accountId} AND id <> ALL(${genuineIds}::text[]) AND id NOT LIKE '%-c%' ORDER BY id LIMIT ${take}`;
      await tx.$executeRaw`INSERT INTO "Pet" (id, "accountId", species, "createdAt", "updatedAt")
        SELECT p.id || ${suffix}, p."accountId", p.species, p."createdAt", p."updatedAt" FROM "Pet" p WHERE p.id IN (${source})`;
      await tx.$executeRaw`INSERT INTO "FingerprintImage" (id, "accountId", "sessionId", "petId", "filePath", "byteSize", usable, "engineVersion", "searchKey", "lightTemplate", "createdAt")
        SELECT f.id || ${suffix}, f."accountId", f."sessionId", f."petId" || ${suffix}, f."filePath", f."byteSize", f.usable, f."engineVersion", f."searchKey", f."lightTemplate", f."createdAt"
        FROM "FingerprintImage" f WHERE f."accountId" = ${accountId} AND f."petId" IN (${source})`;
      await tx.$executeRaw`INSERT INTO "PetSearchKeys" ("petId", "accountId", "imageIds", "engineVersion", keys)
        SELECT k."petId" || ${suffix}, k."accountId", ARRAY(SELECT i || ${suffix} FROM unnest(k."imageIds") WITH ORDINALITY AS u(i, n) ORDER BY n), k."engineVersion", k.keys
        FROM "PetSearchKeys" k WHERE k."petId" IN (${source})`;
    }, { timeout: 600_000 });
    held += take;
    log(`gallery load: ${held} pets (copies, round ${round})`);
  }
}

/**
 * The engine threads a restarted process has: new ones (an earlier size's or database's load left the old threads'
 * memory grown and free, which indexes faster than memory touched for the first time), started before anything is
 * timed (their start-up, loading the engine, is a fixed cost of a process, not a cost a pet).
 */
async function newEngineThreads(): Promise<void> {
  await shutdownEngine();
  await galleryTotals();
}

export async function benchGalleryLoad(mode: "postgres" | "pglite", pets: number, options: Omit<IdentificationBenchOptions, "sizes">): Promise<GalleryLoadResult> {
  const { subjects, strangers, pool } = await prepareTemplates(options);
  const database = await openTestDatabase(mode, "bench_gallery");
  const db = database.open.prisma;
  try {
    const account = await db.account.create({ data: { name: "Bench gallery" } });
    const session = await db.captureSession.create({
      data: { accountId: account.id, purpose: "PET_PROFILE_REGISTRATION", species: "DOG", expiresAt: new Date(Date.now() + 3600_000) },
    });
    const rng = new Rng(778);
    const genuineIds: string[] = [];
    let templateRows = 0;
    let templateBytes = 0;
    let searchKeyBytes = 0;
    const written = Math.min(pets, WRITTEN_PETS);
    options.log(`gallery load: writing ${written} enrolled pets to ${mode}`);
    for (let start = 0; start < written; start += 500) {
      const batch = Array.from({ length: Math.min(500, written - start) }, (_, i) => start + i);
      const rows = batch.map((n) => ({ id: `bench-pet-${String(n).padStart(7, "0")}`, accountId: account.id, species: "DOG" as const }));
      await db.pet.createMany({ data: rows });
      // As a registration leaves the rows, in its order: an image row made, its template written at its upload, and
      // once the job enrols the pet, each image's search key and light template (lib/jobs/templates.ts,
      // writeEnrolmentCuts), then the pet's gallery entry (writePetSearchKeys). The order places each pet's keys in the
      // database's storage between pets' templates, as registrations one after another do.
      for (const [i, n] of batch.entries()) {
        const templates = n < subjects.length ? subjects[n].enrol : [...distractorMix(rng, pool.length)].map((k) => pool[k]);
        if (n < subjects.length) genuineIds.push(rows[i].id);
        const images = templates.map(() => ({ id: newCuid(), accountId: account.id, sessionId: session.id, petId: rows[i].id, filePath: "images/bench/none.jpg", byteSize: 0, usable: true, engineVersion: ENGINE_VERSION }));
        await db.fingerprintImage.createMany({ data: images });
        for (const [k, template] of templates.entries()) await writeImageBytes(db, images[k].id, { template });
        for (const [k, template] of templates.entries()) {
          const searchKey = searchKeyOfTemplate(template);
          await writeImageBytes(db, images[k].id, { searchKey, lightTemplate: lightTemplateOf(template) });
          searchKeyBytes += searchKey.byteLength;
        }
        // The job's finish: the pet's gallery entry, written from its images' keys.
        await writePetSearchKeys(db, account.id, [rows[i].id]);
        templateRows += templates.length;
        templateBytes += templates.reduce((sum, template) => sum + template.byteLength, 0);
      }
    }

    await copyDistractorPets(db, account.id, genuineIds, pets, options.log);
    // The planner's statistics of the rows written, as a process opening the embedded database gathers them
    // (lib/db/embedded-statistics.ts) and as PostgreSQL's autovacuum does within a minute.
    await analyzeChangedTables(db);
    const scope: GalleryScope = { accountId: account.id, poolId: null, species: "DOG" };
    // A process starting with these pets enrolled: its galleries preloaded (what start-up does in the background), in
    // new engine threads (newEngineThreads); a batch is dealt to their shards as it is read.
    await newEngineThreads();
    // The database's side of a load alone: every batch read, nothing indexed.
    let t0 = performance.now();
    let read = 0;
    for (let batch = await galleryBatchAfter(db, scope, "", 1000); batch; batch = await galleryBatchAfter(db, scope, batch.last, 1000)) read += packedPetCount(batch.pets);
    const readMs = performance.now() - t0;
    if (read !== pets) throw new Error(`the gallery rows hold ${read} pets, not ${pets}`);
    const snapshots = new GallerySnapshots(fs.mkdtempSync(path.join(os.tmpdir(), "bench-galleries-")));
    const postgres = mode === "postgres" ? postgresPids() : [];
    const postgresCpu = () => postgres.reduce((sum, pid) => sum + processCpuMicros(pid), 0) / 1000;
    const timedPreload = async (manager: GalleryManager) => {
      const postgresBefore = postgresCpu();
      const cpu = process.cpuUsage();
      const started = performance.now();
      await manager.preload();
      const ms = performance.now() - started;
      const cpuMs = cpuMsSince(cpu);
      if ((await manager.stats(scope)).pets !== pets) throw new Error("the preloaded gallery does not hold every pet");
      return { ms, cpuMs, postgresCpuMs: postgresCpu() - postgresBefore };
    };
    const first = new GalleryManager(db, undefined, snapshots);
    const { ms: loadMs, cpuMs: loadCpuMs, postgresCpuMs: loadPostgresCpuMs } = await timedPreload(first);
    // The snapshot the first load saved; then a process starting anew with it.
    await first.snapshotsSaved();
    await first.dropAll();
    await newEngineThreads();
    const manager = new GalleryManager(db, undefined, snapshots);
    const { ms: restartMs, cpuMs: restartCpuMs, postgresCpuMs: restartPostgresCpuMs } = await timedPreload(manager);
    // A copy has no whole template, which a full comparison reads: a gallery of copies is loaded, not searched.
    const search = pets > written ? null : await (async (): Promise<GallerySearchFigures> => {
      const latencies: number[] = [];
      let rank1 = 0;
      for (let s = 0; s < subjects.length; s++) {
        t0 = performance.now();
        const outcome = await manager.identify(scope, subjects[s].probe);
        latencies.push(performance.now() - t0);
        if (outcome.candidates[0]?.petId === genuineIds[s]) rank1++;
      }
      const unknown: number[] = [];
      let nobody = 0;
      for (const probe of strangers) {
        t0 = performance.now();
        const outcome = await manager.identify(scope, probe);
        unknown.push(performance.now() - t0);
        if (outcome.candidates.length === 0) nobody++;
      }
      const lightReads: number[] = [];
      const lightReadsAgain: number[] = [];
      const petIds = (await db.pet.findMany({ where: { accountId: account.id }, select: { id: true }, take: 368 * 5 })).map((pet) => pet.id);
      for (let i = 0; i < 5; i++) {
        forgetLightTemplates();
        for (const reads of [lightReads, lightReadsAgain]) {
          t0 = performance.now();
          await enrolledLightTemplatesByPet(db, account.id, petIds.slice(i * 368, (i + 1) * 368));
          reads.push(performance.now() - t0);
        }
      }
      // Another process enrols one more pet, as a registration job's finish does (rows and change together).
      await db.$transaction(async (tx) => {
        const late = await tx.pet.create({ data: { accountId: account.id, species: "DOG" } });
        await recordGalleryChanges(tx, account.id, [late.id]);
        await tx.fingerprintImage.createMany({
          data: subjects[0].enrol.map((template) => ({
            accountId: account.id,
            sessionId: session.id,
            petId: late.id,
            filePath: "images/bench/none.jpg",
            byteSize: 0,
            usable: true,
            template: Buffer.from(template),
            engineVersion: ENGINE_VERSION,
          })),
        });
      });
      t0 = performance.now();
      await manager.identify(scope, subjects[1].probe);
      const afterChangeMs = performance.now() - t0;
      return { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), rank1: rank1 / subjects.length, unknownP50: quantile(unknown, 0.5), unknownP95: quantile(unknown, 0.95), nobody: nobody / Math.max(1, strangers.length), lightReadMs: quantile(lightReads, 0.5), lightReadAgainMs: quantile(lightReadsAgain, 0.5), afterChangeMs };
    })();
    await manager.dropAll();
    await manager.snapshotsSaved();
    fs.rmSync(snapshots.dir, { recursive: true, force: true });
    return { mode, pets, copied: pets - written, templateRows, templateBytes, searchKeyBytes, loadMs, loadCpuMs, loadPostgresCpuMs, restartMs, restartCpuMs, restartPostgresCpuMs, readMs, search };
  } finally {
    await database.close();
  }
}
