import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openOwnedDatabase } from "@/lib/db";
import type { OpenDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { MAX_JOB_ATTEMPTS, resumePendingJobs, runJobUnlessAbandoned, type JobQueue } from "./job-queue";

// Start-up recovery on a real (embedded) database: what a crash left PENDING is resumed, unless it
// has already been interrupted MAX_JOB_ATTEMPTS times, in which case it fails and frees its pet.

let dir: string;
let db: OpenDatabase;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-jobs-"));
  db = await openOwnedDatabase(readEnv({ DATA_DIR: dir } as unknown as NodeJS.ProcessEnv), "cli");
});

afterAll(async () => {
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** An account with one pet and a registration capture session, for jobs to refer to. */
async function createPetWithSession(accountName: string) {
  const p = db.prisma;
  const account = await p.account.create({ data: { name: accountName } });
  const pet = await p.pet.create({ data: { accountId: account.id, species: "DOG" } });
  const session = await p.captureSession.create({
    data: { accountId: account.id, species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet.id, expiresAt: new Date(Date.now() + 60_000) },
  });
  return { account, pet, session };
}

describe("resumePendingJobs", () => {
  it("re-enqueues interrupted jobs and fails the ones that keep being interrupted", async () => {
    const p = db.prisma;
    const { account, pet, session } = await createPetWithSession("A");
    const fresh = await p.job.create({ data: { accountId: account.id, kind: "VERIFICATION", petId: pet.id, sessionId: session.id, attempts: 1 } });
    const doomed = await p.job.create({
      data: { accountId: account.id, kind: "FINGERPRINT_ADDITION", petId: pet.id, sessionId: session.id, attempts: MAX_JOB_ATTEMPTS },
    });
    await p.pet.update({ where: { id: pet.id }, data: { activeAdditionJobId: doomed.id } });
    await p.job.create({ data: { accountId: account.id, kind: "VERIFICATION", petId: pet.id, sessionId: session.id, status: "SUCCESS" } });

    const enqueued: string[] = [];
    const queue: JobQueue = { enqueue: (id) => void enqueued.push(id), close: async () => {} };
    expect(await resumePendingJobs(p, queue)).toEqual({ resumed: 1, failed: 1 });
    expect(enqueued).toEqual([fresh.id]);
    const failed = await p.job.findUniqueOrThrow({ where: { id: doomed.id } });
    expect(failed.status).toBe("FAILED");
    expect(failed.failureReason).toMatchObject({ code: "ABANDONED" });
    expect((await p.pet.findUniqueOrThrow({ where: { id: pet.id } })).activeAdditionJobId).toBeNull();
  });
});

describe("runJobUnlessAbandoned", () => {
  it("gives a run that a database outage interrupted back, but still fails a job that keeps being interrupted otherwise", async () => {
    const p = db.prisma;
    const { account, pet, session } = await createPetWithSession("B");
    // Both jobs have used every attempt; one of them lost two of its runs to database outages.
    const interrupted = await p.job.create({
      data: { accountId: account.id, kind: "FINGERPRINT_ADDITION", petId: pet.id, sessionId: session.id, attempts: MAX_JOB_ATTEMPTS },
    });
    const crashing = await p.job.create({
      data: { accountId: account.id, kind: "FINGERPRINT_ADDITION", petId: pet.id, sessionId: session.id, attempts: MAX_JOB_ATTEMPTS },
    });

    expect(await runJobUnlessAbandoned(p, interrupted.id, 2)).toBe("ran");
    const ran = await p.job.findUniqueOrThrow({ where: { id: interrupted.id } });
    // The session has no images, so the run ends FAILED for that reason, not ABANDONED.
    expect(ran.status).toBe("FAILED");
    expect(ran.failureReason).toMatchObject({ code: "INSUFFICIENT_USABLE_IMAGES" });
    expect(ran.attempts).toBe(MAX_JOB_ATTEMPTS + 1);

    expect(await runJobUnlessAbandoned(p, crashing.id)).toBe("abandoned");
    expect((await p.job.findUniqueOrThrow({ where: { id: crashing.id } })).failureReason).toMatchObject({ code: "ABANDONED" });
  });
});
