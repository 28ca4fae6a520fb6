import type { Db } from "@/lib/db/connect";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import type { Prisma } from "@/lib/generated/prisma/client";
import { readImageFile } from "@/lib/storage/images";
import type { QualityReport } from "@/lib/biometrics";
import { getEngine } from "./engine-port";

type Json = Prisma.InputJsonValue;

interface ImageRow {
  id: string;
  filePath: string;
  usable: boolean;
  template: Uint8Array | null;
  engineVersion: number | null;
  quality: unknown;
}

type Outcome =
  | { status: "SUCCESS"; result?: Json; details?: Json }
  | { status: "FAILED"; reason: Json };

const imageSelect = { id: true, filePath: true, usable: true, template: true, engineVersion: true, quality: true } as const;

/**
 * A template from an older engine version is not silently misread: the image is analysed again
 * from its stored file and the row updated.
 */
async function currentTemplates(db: Db, images: ImageRow[]): Promise<ImageRow[]> {
  const { ENGINE_VERSION, analyseImage } = await getEngine();
  const out: ImageRow[] = [];
  for (const image of images) {
    if (image.engineVersion === ENGINE_VERSION) {
      out.push(image);
      continue;
    }
    const analysis = await analyseImage(await readImageFile(image.filePath));
    const refreshed = {
      usable: analysis.ok && analysis.quality.usable && analysis.template !== null,
      template: analysis.ok && analysis.template ? Buffer.from(analysis.template) : null,
      quality: (analysis.ok ? analysis.quality : { rejection: analysis.rejection }) as Json,
      engineVersion: ENGINE_VERSION,
    };
    await db.fingerprintImage.update({ where: { id: image.id }, data: refreshed });
    out.push({ ...image, ...refreshed });
  }
  return out;
}

function usableTemplates(images: ImageRow[]): Uint8Array[] {
  return images.filter((i) => i.usable && i.template).map((i) => new Uint8Array(i.template!));
}

function isQualityReport(value: unknown): value is QualityReport {
  return typeof value === "object" && value !== null && "score" in value && "reasons" in value && "figures" in value;
}

/** What support needs to tell the clinic why: a summary with advice, and each image's verdict and figures. */
async function tooFewUsable(images: ImageRow[], required: number, set: "probe" | "enrolment"): Promise<Outcome> {
  const { explainQualityFailure } = await getEngine();
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

async function sessionImages(db: Db, sessionId: string) {
  return currentTemplates(db, await db.fingerprintImage.findMany({ where: { sessionId }, select: imageSelect, orderBy: { createdAt: "asc" } }));
}

type JobRow = NonNullable<Awaited<ReturnType<typeof loadJob>>>;

function loadJob(db: Db, jobId: string) {
  return db.job.findUnique({ where: { id: jobId }, include: { session: true, account: true } });
}

async function runFingerprintAddition(db: Db, job: JobRow): Promise<Outcome> {
  const { MIN_USABLE_ENROL_IMAGES } = await getEngine();
  const images = await sessionImages(db, job.sessionId);
  if (usableTemplates(images).length < MIN_USABLE_ENROL_IMAGES) return tooFewUsable(images, MIN_USABLE_ENROL_IMAGES, "enrolment");
  // Enrolment happens in finishJob, in the same transaction that marks the job SUCCESS.
  return { status: "SUCCESS" };
}

async function runVerification(db: Db, job: JobRow): Promise<Outcome> {
  const { MIN_USABLE_PROBE_IMAGES, verifyPet } = await getEngine();
  const probe = await sessionImages(db, job.sessionId);
  if (usableTemplates(probe).length < MIN_USABLE_PROBE_IMAGES) return tooFewUsable(probe, MIN_USABLE_PROBE_IMAGES, "probe");
  const enrolled = await currentTemplates(
    db,
    await db.fingerprintImage.findMany({ where: { accountId: job.accountId, petId: job.petId }, select: imageSelect }),
  );
  const enrolledTemplates = usableTemplates(enrolled);
  if (enrolledTemplates.length === 0) return { status: "FAILED", reason: { code: "PET_HAS_NO_USABLE_ENROLMENT" } };
  const outcome = await verifyPet(usableTemplates(probe), enrolledTemplates);
  return {
    status: "SUCCESS",
    result: { score: outcome.score, isVerified: outcome.isVerified },
    details: JSON.parse(JSON.stringify(outcome.details ?? null)) as Json,
  };
}

async function runIdentification(db: Db, job: JobRow): Promise<Outcome> {
  const { MIN_USABLE_PROBE_IMAGES, identifyPet } = await getEngine();
  const probe = await sessionImages(db, job.sessionId);
  if (usableTemplates(probe).length < MIN_USABLE_PROBE_IMAGES) return tooFewUsable(probe, MIN_USABLE_PROBE_IMAGES, "probe");
  const poolName = job.account.searchPoolName;
  let poolId: string | undefined;
  if (poolName) {
    const pool = await db.searchPool.findUnique({ where: { accountId_name: { accountId: job.accountId, name: poolName } } });
    if (!pool) return { status: "FAILED", reason: { code: "SEARCH_POOL_MISSING", pool: poolName } };
    poolId = pool.id;
  }
  // The default pool is every pet of the account; a named pool only its members. Same species only.
  const rows = await db.fingerprintImage.findMany({
    where: { accountId: job.accountId, usable: true, pet: { species: job.session.species, ...(poolId ? { poolId } : {}) } },
    select: { ...imageSelect, petId: true },
  });
  const refreshed = await currentTemplates(db, rows);
  const byPet = new Map<string, Uint8Array[]>();
  refreshed.forEach((image, i) => {
    if (!image.usable || !image.template) return;
    const petId = rows[i].petId!;
    byPet.set(petId, [...(byPet.get(petId) ?? []), new Uint8Array(image.template)]);
  });
  const gallery = [...byPet].map(([petId, templates]) => ({ petId, templates }));
  const outcome = await identifyPet(usableTemplates(probe), gallery);
  return {
    status: "SUCCESS",
    result: { candidates: outcome.candidates.map((c) => ({ petId: c.petId, score: c.score })) },
    details: JSON.parse(JSON.stringify(outcome.details ?? null)) as Json,
  };
}

async function finishJob(db: Db, job: JobRow, outcome: Outcome): Promise<void> {
  await db.$transaction(async (tx) => {
    const { count } = await tx.job.updateMany({
      where: { id: job.id, status: "PENDING" },
      data:
        outcome.status === "SUCCESS"
          ? { status: "SUCCESS", result: outcome.result ?? undefined, details: outcome.details ?? undefined, finishedAt: new Date() }
          : { status: "FAILED", failureReason: outcome.reason, finishedAt: new Date() },
    });
    if (count === 0 || job.kind !== "FINGERPRINT_ADDITION" || !job.petId) return;
    if (outcome.status === "SUCCESS") {
      // Only the usable images join the pet's enrolled set; the rest stay with the session.
      await tx.fingerprintImage.updateMany({ where: { sessionId: job.sessionId, usable: true }, data: { petId: job.petId } });
      await tx.appearanceImage.updateMany({ where: { sessionId: job.sessionId }, data: { petId: job.petId } });
    }
    await tx.pet.updateMany({ where: { id: job.petId, activeAdditionJobId: job.id }, data: { activeAdditionJobId: null } });
  });
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
}
