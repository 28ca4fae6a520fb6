import type { Db } from "@/lib/db/connect";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { Prisma } from "@/lib/generated/prisma/client";
import { recordGalleryChanges } from "@/lib/galleries/gallery-changes";
import { getGalleryManager } from "@/lib/galleries/gallery-manager";
import { writePetSearchKeys } from "@/lib/galleries/gallery-rows";
import { explainQualityFailure, MIN_USABLE_ENROL_IMAGES, MIN_USABLE_PROBE_IMAGES, verifyPet, type QualityReport } from "@/lib/engine";
import { recordAudit } from "@/lib/accounts/audit";
import { logError } from "@/lib/log";
import { metrics } from "@/lib/metrics";
import { wakeWebhookDispatcher } from "@/lib/webhooks/dispatcher";
import { recordJobEnd } from "@/lib/webhooks/events";
import { currentTemplates, extractionFor, imageRows, usableImageFiles, usableProbeTurns, usableTemplates, writeEnrolmentCuts, type ImageRow } from "./templates";

type Json = Prisma.InputJsonValue;

type Outcome =
  | { status: "SUCCESS"; result?: Json; details?: Json }
  | { status: "FAILED"; reason: Json };

function isQualityReport(value: unknown): value is QualityReport {
  return typeof value === "object" && value !== null && "score" in value && "reasons" in value && "figures" in value;
}

/** What support needs to tell the clinic why: a summary with advice, and each image's verdict and figures. */
async function tooFewUsable(images: ImageRow[], required: number, set: "probe" | "enrolment"): Promise<Outcome> {
  const explanation = explainQualityFailure(images.map((i) => i.quality).filter(isQualityReport), required);
  return {
    status: "FAILED",
    reason: {
      code: "INSUFFICIENT_USABLE_IMAGES",
      set,
      required,
      usable: usableTemplates(images).length,
      summary: explanation.summary,
      reasons: explanation.reasons as unknown as Json,
      images: images.map((i) => ({ id: i.id, usable: i.usable, quality: i.quality as Json })),
    },
  };
}

async function sessionImages(db: Db, job: JobRow) {
  return currentTemplates(db, await imageRows(db, Prisma.sql`"sessionId" = ${job.sessionId}`), extractionFor(job.session.purpose));
}

type JobRow = NonNullable<Awaited<ReturnType<typeof loadJob>>>;

function loadJob(db: Db, jobId: string) {
  return db.job.findUnique({ where: { id: jobId }, include: { session: true, account: true } });
}

async function runFingerprintAddition(db: Db, job: JobRow): Promise<Outcome> {
  const images = await sessionImages(db, job);
  if (usableTemplates(images).length < MIN_USABLE_ENROL_IMAGES) return tooFewUsable(images, MIN_USABLE_ENROL_IMAGES, "enrolment");
  // Everything a gallery reads of an enrolled image is written now, not on the first search.
  await writeEnrolmentCuts(db, images);
  let duplicates: { petId: string; score: number }[];
  try {
    duplicates = await registeredDuplicates(db, job, usableTemplates(images));
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    // The check is the service's own; its failure does not fail the clinic's registration. Support sees it.
    logError("duplicate-check-failed", error, { jobId: job.id });
    return { status: "SUCCESS", details: { duplicateCheck: "FAILED" } };
  }
  // Enrolment happens in finishJob, in the same transaction that marks the job SUCCESS.
  return { status: "SUCCESS", ...(duplicates.length > 0 ? { details: { duplicates } } : {}) };
}

/**
 * Other pets of the account (any search pool, same species) whose enrolled prints match this registration's at or
 * above the decision threshold, best first: the same animal registered twice. The registration still succeeds (the
 * API has no field for it); the match is kept on the job and in the audit log for support (finishJob).
 */
async function registeredDuplicates(db: Db, job: JobRow, templates: Uint8Array[]): Promise<{ petId: string; score: number }[]> {
  const outcome = await getGalleryManager(db).identify({ accountId: job.accountId, poolId: null, species: job.session.species }, templates);
  return outcome.candidates.filter((c) => c.petId !== job.petId).map((c) => ({ petId: c.petId, score: c.score }));
}

/** Logs a probe image whose file the job could not read to try a turned nose (that image is compared upright only). */
function logUnreadableProbe(job: JobRow): (error: unknown, image: ImageRow) => void {
  return (error, image) => logError("probe-image-unreadable", error, { jobId: job.id, imageId: image.id });
}

async function runVerification(db: Db, job: JobRow): Promise<Outcome> {
  const probe = await sessionImages(db, job);
  if (usableTemplates(probe).length < MIN_USABLE_PROBE_IMAGES) return tooFewUsable(probe, MIN_USABLE_PROBE_IMAGES, "probe");
  const enrolled = await currentTemplates(db, await imageRows(db, Prisma.sql`"accountId" = ${job.accountId} AND "petId" = ${job.petId}`));
  const enrolledTemplates = usableTemplates(enrolled);
  if (enrolledTemplates.length === 0) return { status: "FAILED", reason: { code: "PET_HAS_NO_USABLE_ENROLMENT" } };
  // The usable probe images' files, which the engine reads to try a turned nose (decision 0029).
  const probeFiles = await usableImageFiles(probe, logUnreadableProbe(job));
  const outcome = await verifyPet(usableTemplates(probe), enrolledTemplates, probeFiles);
  return {
    status: "SUCCESS",
    result: { score: outcome.score, isVerified: outcome.isVerified },
    details: JSON.parse(JSON.stringify(outcome.details ?? null)) as Json,
  };
}

async function runIdentification(db: Db, job: JobRow): Promise<Outcome> {
  const probe = await sessionImages(db, job);
  if (usableTemplates(probe).length < MIN_USABLE_PROBE_IMAGES) return tooFewUsable(probe, MIN_USABLE_PROBE_IMAGES, "probe");
  const poolName = job.account.searchPoolName;
  let poolId: string | null = null;
  if (poolName) {
    const pool = await db.searchPool.findUnique({ where: { accountId_name: { accountId: job.accountId, name: poolName } } });
    if (!pool) return { status: "FAILED", reason: { code: "SEARCH_POOL_MISSING", pool: poolName } };
    poolId = pool.id;
  }
  // The default pool is every pet of the account; a named pool only its members. Same species only.
  const probeTurns = await usableProbeTurns(probe, logUnreadableProbe(job));
  const outcome = await getGalleryManager(db).identify({ accountId: job.accountId, poolId, species: job.session.species }, usableTemplates(probe), probeTurns);
  // Which pool was searched and how many registered pets of the species it held (its gallery's pets when searched, as
  // the engine counted them): a "no match" is only as wide as the pool (the dashboard says so).
  const searchedPool = { name: poolName ?? "default", pets: outcome.details.searched };
  return {
    status: "SUCCESS",
    result: { candidates: outcome.candidates.map((c) => ({ petId: c.petId, score: c.score })) },
    details: JSON.parse(JSON.stringify({ ...(outcome.details ?? {}), pool: searchedPool })) as Json,
  };
}

async function finishJob(db: Db, job: JobRow, outcome: Outcome): Promise<void> {
  const enrols = outcome.status === "SUCCESS" && job.kind === "FINGERPRINT_ADDITION" && !!job.petId;
  let deliveries = 0;
  await db.$transaction(async (tx) => {
    // The pet row first, as a deletion takes it (pets.ts: pet, sessions, then the gallery lock): taking
    // the gallery lock first deadlocked against a deletion of the pet in PostgreSQL (40P01, a 500).
    if (job.kind === "FINGERPRINT_ADDITION" && job.petId) await tx.$executeRaw`SELECT 1 FROM "Pet" WHERE id = ${job.petId} FOR UPDATE`;
    // The pet's galleries change with its enrolled set, in this transaction (see recordGalleryChanges).
    if (enrols) await recordGalleryChanges(tx, job.accountId, [job.petId!]);
    const { count } = await tx.job.updateMany({
      where: { id: job.id, status: "PENDING" },
      data:
        outcome.status === "SUCCESS"
          ? { status: "SUCCESS", result: outcome.result ?? undefined, details: outcome.details ?? undefined, finishedAt: new Date() }
          : { status: "FAILED", failureReason: outcome.reason, finishedAt: new Date() },
    });
    // The account's webhook endpoints are told of the end in this transaction: an ended job's deliveries exist.
    if (count === 1) deliveries = await recordJobEnd(tx, job);
    // A 1:N probe's turned views serve its one search (a session starts one job): kept until the job ends, retries
    // included, then cleared (decision 0042).
    if (count === 1 && job.kind === "IDENTIFICATION") {
      await tx.$executeRaw`UPDATE "FingerprintImage" SET "turnedViews" = NULL WHERE "sessionId" = ${job.sessionId} AND "turnedViews" IS NOT NULL`;
    }
    if (count === 0 || job.kind !== "FINGERPRINT_ADDITION" || !job.petId) return;
    if (outcome.status === "SUCCESS") {
      const duplicates = (outcome.details as { duplicates?: { petId: string; score: number }[] } | undefined)?.duplicates ?? [];
      if (duplicates.length > 0) {
        await recordAudit(tx, { kind: "service", name: "registration" }, {
          action: "pet.duplicate-prints",
          accountId: job.accountId,
          target: job.petId,
          data: { jobId: job.id, matches: duplicates, matchedPetIds: duplicates.map((d) => d.petId) },
        });
      }
      // Only the usable images join the pet's enrolled set; the rest stay with the session.
      await tx.fingerprintImage.updateMany({ where: { sessionId: job.sessionId, usable: true }, data: { petId: job.petId } });
      // The pet's gallery entry, of its enrolled set as it is now: what a gallery load reads of it.
      await writePetSearchKeys(tx, job.accountId, [job.petId]);
      await tx.appearanceImage.updateMany({ where: { sessionId: job.sessionId }, data: { petId: job.petId } });
    }
    await tx.pet.updateMany({ where: { id: job.petId, activeAdditionJobId: job.id }, data: { activeAdditionJobId: null } });
  });
  if (deliveries > 0) wakeWebhookDispatcher();
}

const runners = {
  FINGERPRINT_ADDITION: runFingerprintAddition,
  VERIFICATION: runVerification,
  IDENTIFICATION: runIdentification,
} as const;

/**
 * Runs one PENDING job to SUCCESS or FAILED. Safe to call twice for one job (a resumed job): the
 * finishing update only applies while the job is PENDING. A job whose pet was deleted meanwhile is
 * gone with it, and nothing is left to do.
 */
export async function runJob(db: Db, jobId: string): Promise<void> {
  const job = await loadJob(db, jobId);
  if (!job || job.status !== "PENDING") return;
  const { count } = await db.job.updateMany({ where: { id: jobId, status: "PENDING" }, data: { attempts: { increment: 1 }, startedAt: new Date() } });
  if (count === 0) return; // finished or deleted (with its pet) meanwhile
  const started = performance.now();
  let outcome: Outcome;
  try {
    outcome = await runners[job.kind](db, job);
  } catch (error) {
    // The database going away is not the job's fault: the queue runs it again once it is back.
    if (isDatabaseUnavailable(error)) throw error;
    // An engine or storage failure still finishes the job: a job never stays PENDING forever.
    outcome = { status: "FAILED", reason: { code: "INTERNAL_ERROR", message: error instanceof Error ? error.message : String(error) } };
  }
  await finishJob(db, job, outcome).catch((error) => {
    if ((error as { code?: string }).code === "P2025") return; // deleted with its pet meanwhile
    throw error;
  });
  metrics().jobSeconds.observe({ kind: job.kind, status: outcome.status }, (performance.now() - started) / 1000);
}
