import type { AuthenticatedKey } from "@/lib/accounts/api-keys";
import { newCuid } from "@/lib/db/ids";
import type { Db } from "@/lib/db/connect";
import { DomainError, invalidInput } from "@/lib/domain-errors";
import { claimSessionOrThrow, getStartableSessionOrThrow } from "@/lib/capture-sessions/sessions";
import { getJobQueue } from "./job-queue";

// Each start runs its checks, creates the job and consumes the session in ONE transaction, so a
// refused start (any error) leaves the session usable, and a created job always owns its session.

async function getPetOrThrow(db: Parameters<Parameters<Db["$transaction"]>[0]>[0], accountId: string, petId: string) {
  const pet = await db.pet.findFirst({ where: { id: petId, accountId }, select: { id: true, species: true } });
  if (!pet) throw new DomainError("PetNotFound");
  return pet;
}

function enqueued(jobId: string): { jobId: string } {
  getJobQueue().enqueue(jobId);
  return { jobId };
}

/**
 * Registered nose images one pet may hold: a verification compares the probe with every one of them,
 * so its cost grows with the count (100 images took 4–5 s a verification). 30 is a full session's
 * worth; a registration that would pass it is refused (10001) and the session stays usable.
 */
export const MAX_REGISTERED_FINGERPRINTS_PER_PET = 30;

export async function startFingerprintAddition(db: Db, accountId: string, petId: string, sessionId: string) {
  const jobId = await db.$transaction(async (tx) => {
    const pet = await getPetOrThrow(tx, accountId, petId);
    await getStartableSessionOrThrow(tx, accountId, sessionId, "PET_PROFILE_REGISTRATION", pet);
    const registered = await tx.fingerprintImage.count({ where: { accountId, petId } });
    const adding = await tx.fingerprintImage.count({ where: { sessionId, usable: true } });
    if (registered + adding > MAX_REGISTERED_FINGERPRINTS_PER_PET) {
      throw invalidInput("sessionId", `the pet holds ${registered} registered nose images; at most ${MAX_REGISTERED_FINGERPRINTS_PER_PET} are kept per pet`);
    }
    // Conditional on no running addition; concurrent starts serialise on the pet row (20007). The pet
    // row is locked before the job row is inserted: the insert's foreign-key lock on the pet taken
    // first would deadlock two concurrent starts in PostgreSQL.
    const jobId = newCuid(); // the same form as every other job id (Prisma cuid)
    const { count } = await tx.pet.updateMany({ where: { id: petId, activeAdditionJobId: null }, data: { activeAdditionJobId: jobId } });
    if (count !== 1) throw new DomainError("FingerprintAdditionInProgress");
    await tx.job.create({ data: { id: jobId, accountId, kind: "FINGERPRINT_ADDITION", petId, sessionId } });
    await claimSessionOrThrow(tx, sessionId);
    return jobId;
  });
  return enqueued(jobId);
}

export async function startVerification(db: Db, accountId: string, petId: string, sessionId: string) {
  const jobId = await db.$transaction(async (tx) => {
    const pet = await getPetOrThrow(tx, accountId, petId);
    // A property of the pet that no capture can fix: answered before the session's completeness (20012).
    await getStartableSessionOrThrow(tx, accountId, sessionId, "PET_VERIFICATION", pet, async () => {
      const enrolled = await tx.fingerprintImage.count({ where: { accountId, petId } });
      if (enrolled === 0) throw new DomainError("PetHasNoFingerprint");
    });
    const job = await tx.job.create({ data: { accountId, kind: "VERIFICATION", petId, sessionId }, select: { id: true } });
    await claimSessionOrThrow(tx, sessionId);
    return job.id;
  });
  return enqueued(jobId);
}

export async function startIdentification(db: Db, account: AuthenticatedKey["account"], sessionId: string) {
  if (!account.plan) throw new DomainError("NoPlanSelected");
  if (!account.plan.identification) throw new DomainError("IdentificationNotInPlan");
  const jobId = await db.$transaction(async (tx) => {
    await getStartableSessionOrThrow(tx, account.id, sessionId, "PET_IDENTIFICATION", null);
    if (account.searchPoolName) {
      const pool = await tx.searchPool.findUnique({ where: { accountId_name: { accountId: account.id, name: account.searchPoolName } } });
      if (!pool) throw new DomainError("SearchPoolNotFound");
    }
    const job = await tx.job.create({ data: { accountId: account.id, kind: "IDENTIFICATION", sessionId }, select: { id: true } });
    await claimSessionOrThrow(tx, sessionId);
    return job.id;
  });
  return enqueued(jobId);
}
