import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "@/lib/domain-errors";
import type { OpenDatabase } from "@/lib/db/connect";
import { DeferredJobQueue, setJobQueue } from "@/lib/jobs/job-queue";
import { openTestDatabase } from "@/lab/test-support/database";
import { MAX_REGISTERED_FINGERPRINTS_PER_PET, startFingerprintAddition } from "./start-jobs";

// The per-pet cap on registered nose images, in both modes: a registration that would pass it is
// refused and leaves its session usable; one that fits starts.

describe.each(["pglite", "postgres"] as const)("registration cap (%s)", (mode) => {
  let open: OpenDatabase;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ open, close } = await openTestDatabase(mode, "caps"));
    setJobQueue(new DeferredJobQueue());
  });

  afterAll(async () => {
    await close?.();
  });

  /** A pet holding `registered` nose images, and a finished registration session of `adding` more. */
  async function petWithSession(registered: number, adding: number) {
    const db = open.prisma;
    const account = await db.account.create({ data: { name: `caps-${registered}-${adding}` } });
    const pet = await db.pet.create({ data: { accountId: account.id, species: "DOG" } });
    const image = (sessionId: string, petId: string | null, i: number) => ({
      accountId: account.id,
      sessionId,
      petId,
      filePath: `images/${account.id}/${sessionId}/fingerprint-${i}.jpg`,
      byteSize: 1,
      usable: true,
      quality: { score: 80, usable: true, reasons: [], figures: {} },
    });
    const expiresAt = new Date(Date.now() + 3_600_000);
    const old = await db.captureSession.create({ data: { accountId: account.id, species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet.id, expiresAt, usedAt: new Date() } });
    for (let i = 0; i < registered; i++) await db.fingerprintImage.create({ data: image(old.id, pet.id, i) });
    const session = await db.captureSession.create({ data: { accountId: account.id, species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet.id, expiresAt } });
    for (let i = 0; i < adding; i++) await db.fingerprintImage.create({ data: image(session.id, null, i) });
    await db.appearanceImage.create({ data: { accountId: account.id, sessionId: session.id, filePath: `images/${account.id}/${session.id}/appearance.jpg`, byteSize: 1 } });
    return { accountId: account.id, petId: pet.id, sessionId: session.id };
  }

  it(`refuses a registration that would take a pet past ${MAX_REGISTERED_FINGERPRINTS_PER_PET} nose images, leaving the session usable`, async () => {
    const t = await petWithSession(MAX_REGISTERED_FINGERPRINTS_PER_PET - 2, 5);
    const error = await startFingerprintAddition(open.prisma, t.accountId, t.petId, t.sessionId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).failure).toBe("InvalidInput");
    expect(Object.keys((error as DomainError).details ?? {})).toEqual(["sessionId"]);
    expect((await open.prisma.captureSession.findUniqueOrThrow({ where: { id: t.sessionId } })).usedAt).toBeNull();
  });

  it("starts one that fits", async () => {
    const t = await petWithSession(MAX_REGISTERED_FINGERPRINTS_PER_PET - 5, 5);
    const { jobId } = await startFingerprintAddition(open.prisma, t.accountId, t.petId, t.sessionId);
    expect(jobId).toMatch(/./);
  });
});
