import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import type { Species } from "@/lib/generated/prisma/enums";
import { recordAudit } from "@/lib/accounts/audit";
import { createCaptureSession, minimumFingerprints } from "@/lib/capture-sessions/sessions";
import { PURPOSES } from "@/lib/capture-sessions/schemas";
import { DECISION_THRESHOLD, scoreToFmr } from "@/lib/engine";
import { viewFingerprintAdditionJob, viewIdentificationJob, viewVerificationJob } from "@/lib/jobs/job-views";
import { startFingerprintAddition, startIdentification, startVerification } from "@/lib/jobs/start-jobs";
import { getPetOrThrow } from "@/lib/pets/pets";
import { speciesSchema } from "@/lib/pets/schemas";
import { uploadAppearance, uploadFingerprint } from "@/lib/uploads/uploads";
import { accountAction, DashboardError } from "./action-client";
import { decisionThreshold, searchedPool } from "./job-outcome";
import { petLabel } from "./pet-fields";
import { qualityOf, type ImageQuality } from "./pets";

// The capture flows (registration, verification, identification): a capture session, uploads with
// the quality verdict, the job start and its progress, through the same services as the API.

const idSchema = z.string().min(1).max(100);

export const createCaptureSessionAction = accountAction({
  capability: "pets:write",
  usesService: true,
  input: z.discriminatedUnion("purpose", [
    z.object({ purpose: z.enum(["PET_PROFILE_REGISTRATION", "PET_VERIFICATION"]), petId: idSchema }),
    z.object({ purpose: z.literal("PET_IDENTIFICATION"), species: speciesSchema }),
  ]),
  async run(ctx, input) {
    // A pet's session takes the pet's species, so a dashboard session can never hit 20015.
    const species = input.purpose === "PET_IDENTIFICATION" ? input.species : (await getPetOrThrow(ctx.db, ctx.accountId, input.petId)).species;
    const session = await createCaptureSession(ctx.db, ctx.accountId, {
      purpose: input.purpose,
      species,
      petId: input.purpose === "PET_IDENTIFICATION" ? undefined : input.petId,
    });
    return { sessionId: session.id, minimumNoseImages: await minimumFingerprints(input.purpose) };
  },
});

const fileSchema = z.custom<File>(
  (value) => typeof value === "object" && value !== null && typeof (value as Blob).arrayBuffer === "function",
  "choose a JPEG file",
);

export type UploadedImage = { id: string; kind: "fingerprint" } & ImageQuality | { id: string; kind: "appearance" };

export const uploadCaptureImageAction = accountAction({
  capability: "pets:write",
  usesService: true,
  input: z.object({ sessionId: idSchema, kind: z.enum(["fingerprint", "appearance"]), file: fileSchema }),
  async run(ctx, input): Promise<UploadedImage> {
    if (input.kind === "appearance") {
      const { id } = await uploadAppearance(ctx.db, ctx.accountId, input.sessionId, input.file);
      return { id, kind: "appearance" };
    }
    const { id } = await uploadFingerprint(ctx.db, ctx.accountId, input.sessionId, input.file);
    const row = await ctx.db.fingerprintImage.findFirstOrThrow({ where: { id, accountId: ctx.accountId }, select: { usable: true, quality: true } });
    return { id, kind: "fingerprint", ...qualityOf(row) };
  },
});

export const startCaptureJobAction = accountAction({
  capability: "pets:write",
  usesService: true,
  input: z.object({ purpose: z.enum(PURPOSES), sessionId: idSchema, petId: idSchema.optional() }),
  async run(ctx, input) {
    const petId = () => {
      if (!input.petId) throw new DashboardError("Choose the pet first.");
      return input.petId;
    };
    let started: { jobId: string };
    if (input.purpose === "PET_PROFILE_REGISTRATION") started = await startFingerprintAddition(ctx.db, ctx.accountId, petId(), input.sessionId);
    else if (input.purpose === "PET_VERIFICATION") started = await startVerification(ctx.db, ctx.accountId, petId(), input.sessionId);
    else {
      const account = await ctx.db.account.findUniqueOrThrow({ where: { id: ctx.accountId }, include: { plan: true } });
      started = await startIdentification(ctx.db, account, input.sessionId);
    }
    await recordAudit(ctx.db, { kind: "user", userId: ctx.user.id, email: ctx.user.email }, {
      action: `job.start`,
      accountId: ctx.accountId,
      target: started.jobId,
      data: { purpose: input.purpose, petId: input.petId ?? null },
    });
    return started;
  },
});

export type JobProgress =
  | { status: "PENDING" }
  | { status: "FAILED"; summary: string | null }
  | { status: "SUCCESS"; kind: "FINGERPRINT_ADDITION"; petId: string }
  | {
      status: "SUCCESS";
      kind: "VERIFICATION";
      isVerified: boolean;
      score: number;
      threshold: number;
      /** What the threshold means: about one false match in this many comparisons of different pets. */
      thresholdOdds: number;
      probeImageIds: string[];
      enrolledImageIds: string[];
    }
  | {
      status: "SUCCESS";
      kind: "IDENTIFICATION";
      candidates: { petId: string; score: number; label: string; appearanceId: string | null }[];
      threshold: number;
      /** The pool searched and its registered pets of the species (null for a job that did not record it). */
      pool: { name: string; pets: number } | null;
      species: Species;
    };

/** Where a capture job stands, in the API's own view of it, plus what the clinic sees on the screen. */
export async function getJobProgress(db: Db, accountId: string, jobId: string): Promise<JobProgress> {
  const job = await db.job.findFirst({
    where: { id: jobId, accountId },
    select: { kind: true, petId: true, sessionId: true, failureReason: true, details: true, session: { select: { species: true } } },
  });
  if (!job) throw new DashboardError("This job does not exist.");
  if (job.kind === "FINGERPRINT_ADDITION") {
    const view = await viewFingerprintAdditionJob(db, accountId, jobId);
    if (view.status === "SUCCESS") return { status: "SUCCESS", kind: job.kind, petId: job.petId! };
    return view.status === "FAILED" ? { status: "FAILED", summary: failureSummary(job.failureReason) } : { status: "PENDING" };
  }
  if (job.kind === "VERIFICATION") {
    const view = await viewVerificationJob(db, accountId, jobId);
    if (view.status === "SUCCESS") {
      // The probe beside the enrolled images, so staff can see why a pet did not verify.
      const [probe, enrolled] = await Promise.all([
        db.fingerprintImage.findMany({ where: { accountId, sessionId: job.sessionId }, select: { id: true }, orderBy: { createdAt: "asc" } }),
        db.fingerprintImage.findMany({ where: { accountId, petId: job.petId! }, select: { id: true }, orderBy: { createdAt: "asc" } }),
      ]);
      return {
        status: "SUCCESS",
        kind: job.kind,
        isVerified: view.isVerified!,
        score: view.score!,
        ...decisionThreshold({ DECISION_THRESHOLD, scoreToFmr }),
        probeImageIds: probe.map((i) => i.id),
        enrolledImageIds: enrolled.map((i) => i.id),
      };
    }
    return view.status === "FAILED" ? { status: "FAILED", summary: failureSummary(job.failureReason) } : { status: "PENDING" };
  }
  const view = await viewIdentificationJob(db, accountId, jobId);
  if (view.status !== "SUCCESS") return view.status === "FAILED" ? { status: "FAILED", summary: failureSummary(job.failureReason) } : { status: "PENDING" };
  const ids = view.pets!.map((p) => p.id);
  const [pets, photos] = await Promise.all([
    db.pet.findMany({ where: { accountId, id: { in: ids } }, select: { id: true, species: true, breed: true, metadata: true } }),
    db.appearanceImage.findMany({ where: { accountId, petId: { in: ids } }, select: { id: true, petId: true }, orderBy: { createdAt: "asc" } }),
  ]);
  return {
    status: "SUCCESS",
    kind: "IDENTIFICATION",
    threshold: DECISION_THRESHOLD,
    pool: searchedPool(job.details),
    species: job.session.species,
    candidates: view.pets!.map((p) => {
      const pet = pets.find((x) => x.id === p.id);
      return {
        petId: p.id,
        score: p.score,
        label: petLabel(pet ?? { species: job.session.species, breed: null, metadata: p.metadata }),
        appearanceId: photos.find((x) => x.petId === p.id)?.id ?? null,
      };
    }),
  };
}

/** The support summary of a failed job (engine advice), which the capture screen shows the clinic too. */
export function failureSummary(reason: unknown): string | null {
  const summary = (reason as { summary?: unknown } | null)?.summary;
  return typeof summary === "string" ? summary : null;
}

export const jobProgressAction = accountAction({
  capability: "pets:write",
  input: z.object({ jobId: idSchema }),
  run: (ctx, input) => getJobProgress(ctx.db, ctx.accountId, input.jobId),
});

