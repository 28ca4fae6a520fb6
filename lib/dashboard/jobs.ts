import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import type { Prisma } from "@/lib/generated/prisma/client";
import { DECISION_THRESHOLD, scoreToFmr } from "@/lib/engine";
import { jobNoseMatches } from "./duplicate-noses";
import { decisionThreshold, jobOutcome, searchedPool } from "./job-outcome";
import { qualityOf } from "./pets";
import { petLabel } from "./pet-fields";

// The support jobs explorer: every job of the account across kinds, and for a failed one the reason
// the API never returns (per-image quality figures and verdicts, the engine's advice).

export const JOB_KINDS = ["FINGERPRINT_ADDITION", "VERIFICATION", "IDENTIFICATION"] as const;
export const JOB_STATUSES = ["PENDING", "SUCCESS", "FAILED"] as const;
const JOBS_PAGE_SIZE = 25;

/** A calendar day that exists ("2026-13-45" does not): anything else is ignored as no filter. */
const dateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine((day) => {
    const date = new Date(`${day}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(day);
  });

export const jobListQuerySchema = z.object({
  status: z.enum([...JOB_STATUSES, "all"]).catch("all"),
  kind: z.enum([...JOB_KINDS, "all"]).catch("all"),
  petId: z.string().trim().max(100).catch(""),
  from: dateSchema.or(z.literal("")).catch(""),
  to: dateSchema.or(z.literal("")).catch(""),
  page: z.coerce.number().int().min(1).catch(1),
});

export type JobListQuery = z.infer<typeof jobListQuerySchema>;

export async function listJobs(db: Db, accountId: string, query: JobListQuery) {
  const where: Prisma.JobWhereInput = { accountId };
  if (query.status !== "all") where.status = query.status;
  if (query.kind !== "all") where.kind = query.kind;
  if (query.petId) where.petId = query.petId;
  if (query.from || query.to) {
    where.createdAt = {
      ...(query.from ? { gte: new Date(`${query.from}T00:00:00Z`) } : {}),
      ...(query.to ? { lt: new Date(new Date(`${query.to}T00:00:00Z`).getTime() + 86_400_000) } : {}),
    };
  }
  const [rows, total] = await Promise.all([
    db.job.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "asc" }],
      skip: (query.page - 1) * JOBS_PAGE_SIZE,
      take: JOBS_PAGE_SIZE,
      select: {
        id: true,
        kind: true,
        status: true,
        petId: true,
        createdAt: true,
        finishedAt: true,
        failureReason: true,
        result: true,
        pet: { select: { species: true, breed: true, metadata: true } },
      },
    }),
    db.job.count({ where }),
  ]);
  return {
    total,
    pageSize: JOBS_PAGE_SIZE,
    rows: rows.map((j) => ({
      id: j.id,
      kind: j.kind,
      status: j.status,
      petId: j.petId,
      petLabel: j.pet ? petLabel(j.pet) : null,
      outcome: jobOutcome(j, DECISION_THRESHOLD),
      createdAt: j.createdAt.toISOString(),
      durationMs: j.finishedAt ? j.finishedAt.getTime() - j.createdAt.getTime() : null,
      summary: (j.failureReason as { summary?: string; code?: string } | null)?.summary ?? (j.failureReason as { code?: string } | null)?.code ?? null,
    })),
  };
}

const failureReasonSchema = z
  .object({
    code: z.string(),
    set: z.string().optional(),
    required: z.number().optional(),
    usable: z.number().optional(),
    summary: z.string().optional(),
    message: z.string().optional(),
    reasons: z.array(z.object({ reason: z.string(), images: z.number(), advice: z.string() })).optional(),
  })
  .loose();

export type FailureReason = z.infer<typeof failureReasonSchema>;

/** One job with everything support needs, scoped to the account: another account's job is simply missing. */
export async function getJobDetail(db: Db, accountId: string, jobId: string) {
  const job = await db.job.findFirst({ where: { id: jobId, accountId }, include: { pet: { select: { species: true, breed: true, metadata: true } } } });
  if (!job) return null;
  const candidates = job.kind === "IDENTIFICATION" && job.status === "SUCCESS" ? ((job.result as { candidates?: { petId: string; score: number }[] } | null)?.candidates ?? []) : [];
  const candidatePets = await db.pet.findMany({ where: { accountId, id: { in: candidates.map((c) => c.petId) } }, select: { id: true, species: true, breed: true, metadata: true } });
  const images = await db.fingerprintImage.findMany({
    where: { sessionId: job.sessionId, accountId },
    select: { id: true, usable: true, quality: true },
    orderBy: { createdAt: "asc" },
  });
  const parsedReason = failureReasonSchema.safeParse(job.failureReason);
  return {
    id: job.id,
    kind: job.kind,
    status: job.status,
    petId: job.petId,
    petLabel: job.pet ? petLabel(job.pet) : null,
    outcome: jobOutcome(job, DECISION_THRESHOLD),
    ...decisionThreshold({ DECISION_THRESHOLD, scoreToFmr }),
    verification: job.kind === "VERIFICATION" && job.status === "SUCCESS" ? (job.result as { isVerified: boolean; score: number }) : null,
    candidates: candidates.map((c) => {
      const pet = candidatePets.find((p) => p.id === c.petId);
      // A candidate deleted since the search still shows, by id.
      return { petId: c.petId, score: c.score, label: pet ? petLabel(pet) : null };
    }),
    pool: job.kind === "IDENTIFICATION" ? searchedPool(job.details) : null,
    noseMatches: await jobNoseMatches(db, accountId, job),
    sessionId: job.sessionId,
    attempts: job.attempts,
    createdAt: job.createdAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
    failure: job.status === "FAILED" ? (parsedReason.success ? parsedReason.data : { code: "UNKNOWN" }) : null,
    images: images.map((i) => {
      const figures = (i.quality as { figures?: Record<string, number> } | null)?.figures ?? null;
      return { id: i.id, ...qualityOf(i), figures };
    }),
  };
}
