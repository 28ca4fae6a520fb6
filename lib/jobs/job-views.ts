import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import { DomainError, type DomainFailure } from "@/lib/domain-errors";

const statusSchema = z.enum(["PENDING", "SUCCESS", "FAILED"]);

export const fingerprintAdditionJobSchema = z.object({ status: statusSchema });
export const verificationJobSchema = z.object({
  status: statusSchema,
  isVerified: z.boolean().optional().describe("Only when status is SUCCESS"),
  score: z.number().min(0).max(100).optional().describe("Only when status is SUCCESS"),
});
export const identificationJobSchema = z.object({
  status: statusSchema,
  pets: z
    .array(z.object({ id: z.string(), score: z.number().min(0).max(100), metadata: z.string().nullable() }))
    .optional()
    .describe("Only when status is SUCCESS; best first"),
});

/** What a view reads: the client, or a transaction (a webhook's payload is the view, written as the job ends). */
type JobReader = Pick<Db, "job" | "pet">;

async function getJobOrThrow(db: JobReader, accountId: string, jobId: string, kind: "FINGERPRINT_ADDITION" | "VERIFICATION" | "IDENTIFICATION", missing: DomainFailure) {
  // Scoped by account and kind: another tenant's job, or a job of another kind, is simply unknown.
  const job = await db.job.findFirst({ where: { id: jobId, accountId, kind }, select: { status: true, result: true } });
  if (!job) throw new DomainError(missing);
  return job;
}

// A FAILED job answers its status only: the reason stays internal (support dashboard).

export async function viewFingerprintAdditionJob(db: JobReader, accountId: string, jobId: string) {
  const job = await getJobOrThrow(db, accountId, jobId, "FINGERPRINT_ADDITION", "FingerprintAdditionJobNotFound");
  return { status: job.status };
}

export async function viewVerificationJob(db: JobReader, accountId: string, jobId: string) {
  const job = await getJobOrThrow(db, accountId, jobId, "VERIFICATION", "VerificationJobNotFound");
  if (job.status !== "SUCCESS") return { status: job.status };
  const result = job.result as { isVerified: boolean; score: number };
  return { status: job.status, isVerified: result.isVerified, score: result.score };
}

export async function viewIdentificationJob(db: JobReader, accountId: string, jobId: string) {
  const job = await getJobOrThrow(db, accountId, jobId, "IDENTIFICATION", "IdentificationJobNotFound");
  if (job.status !== "SUCCESS") return { status: job.status };
  const { candidates } = job.result as { candidates: { petId: string; score: number }[] };
  // Metadata is read now, so an edit shows; a pet deleted since the search is left out.
  const pets = await db.pet.findMany({ where: { accountId, id: { in: candidates.map((c) => c.petId) } }, select: { id: true, metadata: true } });
  const metadataById = new Map(pets.map((p) => [p.id, p.metadata]));
  return {
    status: job.status,
    pets: candidates.filter((c) => metadataById.has(c.petId)).map((c) => ({ id: c.petId, score: c.score, metadata: metadataById.get(c.petId)! })),
  };
}

const viewsByKind = {
  FINGERPRINT_ADDITION: viewFingerprintAdditionJob,
  VERIFICATION: viewVerificationJob,
  IDENTIFICATION: viewIdentificationJob,
} as const;

/** The view GET answers for a job of any kind (the webhook payload's `view`). */
export function viewJob(db: JobReader, accountId: string, jobId: string, kind: keyof typeof viewsByKind) {
  return viewsByKind[kind](db, accountId, jobId);
}
