import type { Db } from "@/lib/db/connect";
import type { Prisma, Species } from "@/lib/generated/prisma/client";
import { DomainError } from "@/lib/domain-errors";
import { readEnv } from "@/lib/env";
import { MIN_ENROL_IMAGES, MIN_PROBE_IMAGES } from "@/lib/engine";
import type { Purpose } from "./schemas";

type Tx = Prisma.TransactionClient | Db;

const PURPOSES_NEEDING_PET: Purpose[] = ["PET_PROFILE_REGISTRATION", "PET_VERIFICATION"];

export async function createCaptureSession(
  db: Db,
  accountId: string,
  input: { species: Species; purpose: Purpose; petId?: string },
): Promise<{ id: string }> {
  const needsPet = PURPOSES_NEEDING_PET.includes(input.purpose);
  if (needsPet && !input.petId) throw new DomainError("CaptureSessionNeedsPet");
  if (needsPet) {
    const pet = await db.pet.findFirst({ where: { id: input.petId, accountId }, select: { id: true } });
    if (!pet) throw new DomainError("PetNotFound");
  }
  const ttlMs = readEnv().CAPTURE_SESSION_TTL_SECONDS * 1000;
  return db.captureSession.create({
    data: {
      accountId,
      species: input.species,
      purpose: input.purpose,
      // An identification session names no pet; a petId sent with one is ignored.
      petId: needsPet ? input.petId : null,
      expiresAt: new Date(Date.now() + ttlMs),
    },
    select: { id: true },
  });
}

/** The session if it exists for this account and has not expired (20010 otherwise). */
export async function getLiveSessionOrThrow(tx: Tx, accountId: string, sessionId: string) {
  const session = await tx.captureSession.findFirst({ where: { id: sessionId, accountId } });
  if (!session || session.expiresAt.getTime() <= Date.now()) throw new DomainError("CaptureSessionNotFound");
  return session;
}

export async function minimumFingerprints(purpose: Purpose): Promise<number> {
  return purpose === "PET_PROFILE_REGISTRATION" ? MIN_ENROL_IMAGES : MIN_PROBE_IMAGES;
}

/**
 * Every check a job start makes on its session, in the order the API answers them:
 * 20010 missing/expired (or made for another pet), 20013 purpose, 20015 species, 20014 used,
 * then `beforeCompleteness` (a check of the pet that no capture can fix, e.g. 20009), 20012 not finished.
 */
export async function getStartableSessionOrThrow(
  tx: Tx,
  accountId: string,
  sessionId: string,
  purpose: Purpose,
  pet: { id: string; species: Species } | null,
  beforeCompleteness?: () => Promise<void>,
) {
  const session = await getLiveSessionOrThrow(tx, accountId, sessionId);
  if (session.purpose !== purpose) throw new DomainError("WrongSessionPurpose");
  if (pet && session.petId !== pet.id) throw new DomainError("CaptureSessionNotFound");
  if (pet && session.species !== pet.species) throw new DomainError("SpeciesMismatch");
  if (session.usedAt) throw new DomainError("CaptureSessionAlreadyUsed");
  if (beforeCompleteness) await beforeCompleteness();
  const [fingerprints, appearances] = await Promise.all([
    tx.fingerprintImage.count({ where: { sessionId } }),
    tx.appearanceImage.count({ where: { sessionId } }),
  ]);
  if (fingerprints < (await minimumFingerprints(purpose)) || appearances < 1) throw new DomainError("CaptureSessionNotFinished");
  return session;
}

/** Marks the session used; the conditional update makes single use hold under concurrent starts (20014). */
export async function claimSessionOrThrow(tx: Tx, sessionId: string): Promise<void> {
  const { count } = await tx.captureSession.updateMany({ where: { id: sessionId, usedAt: null }, data: { usedAt: new Date() } });
  if (count !== 1) throw new DomainError("CaptureSessionAlreadyUsed");
}
