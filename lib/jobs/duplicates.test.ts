import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "@/lib/db/connect";
import { jobNoseMatches, petNoseMatches } from "@/lib/dashboard/duplicate-noses";
import { getGalleryManager } from "@/lib/galleries/gallery-manager";
import sharp from "sharp";
import { analyseImage, DECISION_THRESHOLD, ENGINE_VERSION, galleryStats, galleryTotals, shutdownEngine } from "@/lib/engine";
import { runJob } from "@/lib/jobs/run-job";
import { extractionFor, writeImageBytes } from "@/lib/jobs/templates";
import { noseCapture } from "@/lab/test-support/nose-images";
import { metrics } from "@/lib/metrics";
import { openTestDatabase } from "@/lab/test-support/database";
import { registerByJob } from "@/lab/test-support/registration";

// A registration whose prints match another enrolled pet of the account succeeds (the API has no field for it) but
// records the match on the job and in the audit log; everything 1:N reads of its images is written at enrolment.

let open: OpenDatabase;
let close: () => Promise<void>;
let accountId: string;

beforeAll(async () => {
  // The process's gallery manager keeps its galleries' snapshots under DATA_DIR: a folder of this test's own.
  process.env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "duplicates-data-"));
  ({ open, close } = await openTestDatabase("pglite", "duplicates"));
  accountId = (await open.prisma.account.create({ data: { name: "Duplicates clinic" } })).id;
}, 120_000);

afterAll(async () => {
  await shutdownEngine();
  await close?.();
  fs.rmSync(process.env.DATA_DIR!, { recursive: true, force: true });
});

/** A new pet and a registration job for it of synthetic dog `seed`'s `captures`, run to its end. */
async function register(seed: number, captures: number[]) {
  const { petId, jobId } = await registerByJob(open.prisma, accountId, seed, captures);
  const job = await open.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
  const audit = await open.prisma.auditLog.findMany({ where: { accountId, action: "pet.duplicate-prints", target: petId } });
  return { petId, job, audit };
}

describe("duplicates caught at registration", () => {
  it("flags the same dog registered twice, not different dogs, and writes what galleries read at enrolment", async () => {
    const timed = async () =>
      (await metrics().jobSeconds.get()).values.find((v) => v.metricName?.endsWith("_count") && v.labels.kind === "FINGERPRINT_ADDITION" && v.labels.status === "SUCCESS")?.value ?? 0;
    const timedBefore = await timed();
    const rex = await register(601, [0, 1, 2, 3, 4]);
    expect(rex.job.status).toBe("SUCCESS");
    expect(rex.job.details).toBeNull();
    expect(rex.audit).toEqual([]);
    // Search key and light template are in the rows before any search reads them.
    const images = await open.prisma.fingerprintImage.findMany({ where: { petId: rex.petId }, select: { searchKey: true, lightTemplate: true } });
    expect(images.length).toBeGreaterThanOrEqual(3);
    for (const image of images) {
      expect(image.searchKey?.byteLength).toBeGreaterThan(0);
      expect(image.lightTemplate?.byteLength).toBeGreaterThan(0);
    }

    // A different dog: no match.
    const max = await register(602, [0, 1, 2, 3, 4]);
    expect(max.job.status).toBe("SUCCESS");
    expect(max.job.details).toBeNull();
    expect(max.audit).toEqual([]);

    // Rex again, from new photos, as a new pet: registered, and the match recorded.
    const again = await register(601, [5, 6, 7, 8, 9]);
    expect(again.job.status).toBe("SUCCESS");
    const duplicates = (again.job.details as { duplicates: { petId: string; score: number }[] }).duplicates;
    expect(duplicates.map((d) => d.petId)).toEqual([rex.petId]);
    expect(duplicates[0].score).toBeGreaterThanOrEqual(DECISION_THRESHOLD);
    expect(again.audit).toHaveLength(1);
    expect(again.audit[0]).toMatchObject({ actor: "service:registration", data: { jobId: again.job.id, matches: duplicates, matchedPetIds: [rex.petId] } });
    // Support sees it on the job page and on both pets' pages; the different dog shows nothing.
    expect(await jobNoseMatches(open.prisma, accountId, again.job)).toMatchObject([{ petId: rex.petId, score: duplicates[0].score }]);
    expect(await petNoseMatches(open.prisma, accountId, again.petId)).toMatchObject([{ petId: rex.petId, jobId: again.job.id }]);
    expect(await petNoseMatches(open.prisma, accountId, rex.petId)).toMatchObject([{ petId: again.petId, jobId: again.job.id }]);
    expect(await petNoseMatches(open.prisma, accountId, max.petId)).toEqual([]);
    // Another account sees none of it.
    const other = await open.prisma.account.create({ data: { name: "Other clinic" } });
    expect(await petNoseMatches(open.prisma, other.id, rex.petId)).toEqual([]);
    // The new pet is enrolled all the same.
    expect(await open.prisma.fingerprintImage.count({ where: { petId: again.petId } })).toBeGreaterThanOrEqual(3);
    // Each finished job is timed for /metrics by its kind and final status.
    expect(await timed()).toBe(timedBefore + 3);
  }, 300_000);

  it("identifies a nose photographed upside down on the turned views its upload stored, and clears them when the job ends", async () => {
    const session = await open.prisma.captureSession.create({
      data: { accountId, species: "DOG", purpose: "PET_IDENTIFICATION", expiresAt: new Date(Date.now() + 3_600_000), usedAt: new Date() },
    });
    for (const capture of [10, 11, 12]) {
      const jpeg = await sharp(await noseCapture(601, capture)).rotate(180).jpeg({ quality: 95 }).toBuffer();
      const analysis = await analyseImage(jpeg, extractionFor("PET_IDENTIFICATION"));
      if (!analysis.ok || !analysis.template || !analysis.turnedViews) throw new Error(`capture ${capture} gave no views`);
      // No file is stored: the search can only turn the probe by its stored views.
      const { id } = await open.prisma.fingerprintImage.create({
        data: { accountId, sessionId: session.id, filePath: `images/${accountId}/${session.id}/missing-${capture}.jpg`, byteSize: 1, usable: analysis.quality.usable, engineVersion: ENGINE_VERSION },
      });
      await writeImageBytes(open.prisma, id, { template: analysis.template, turnedViews: analysis.turnedViews });
    }
    const job = await open.prisma.job.create({ data: { accountId, kind: "IDENTIFICATION", sessionId: session.id } });
    await runJob(open.prisma, job.id);
    const done = await open.prisma.job.findUniqueOrThrow({ where: { id: job.id } });
    expect(done.status).toBe("SUCCESS");
    // Rex was registered twice (first and third); either of his pets is the answer, Max (second) is not.
    const [rex, max, rexAgain] = (await open.prisma.pet.findMany({ where: { accountId }, orderBy: { createdAt: "asc" } })).map((pet) => pet.id);
    const candidates = (done.result as { candidates: { petId: string }[] }).candidates.map((c) => c.petId);
    expect([rex, rexAgain]).toContain(candidates[0]);
    expect(candidates).not.toContain(max);
    // The pool searched, with the registered dogs its gallery held (Rex twice and Max).
    const registered = await open.prisma.pet.count({ where: { accountId, species: "DOG", fingerprints: { some: {} } } });
    expect(registered).toBe(3);
    expect((done.details as { pool: unknown }).pool).toEqual({ name: "default", pets: registered });
    expect(await open.prisma.fingerprintImage.count({ where: { sessionId: session.id } })).toBe(3);
    expect(await open.prisma.fingerprintImage.count({ where: { sessionId: session.id, turnedViews: { not: null } } })).toBe(0);
  }, 120_000);

  it("preloads the galleries searches will need, and fills light templates older enrolments lack", async () => {
    const manager = getGalleryManager(open.prisma);
    await manager.dropAll();
    // Images enrolled before registrations wrote light templates.
    const { count } = await open.prisma.fingerprintImage.updateMany({ where: { accountId, petId: { not: null } }, data: { lightTemplate: null } });
    expect(count).toBeGreaterThan(0);
    expect(await manager.preload()).toMatchObject({ galleries: 1 });
    expect(await galleryStats(`${accountId}/*/DOG`)).toMatchObject({ loaded: true, pets: 3 });
    // What /metrics reports of this process's galleries.
    expect(await galleryTotals()).toMatchObject({ galleries: 1, pets: 3 });
    expect(await open.prisma.fingerprintImage.count({ where: { accountId, petId: { not: null }, usable: true, lightTemplate: null } })).toBe(0);
  }, 120_000);
});
