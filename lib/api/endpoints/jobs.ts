import { z } from "zod";
import { sessionIdBodySchema } from "@/lib/capture-sessions/schemas";
import { awaitCacheInvalidation } from "@/lib/db/notified-cache";
import { petIdParamsSchema } from "@/lib/pets/schemas";
import {
  fingerprintAdditionJobSchema,
  identificationJobSchema,
  verificationJobSchema,
  viewFingerprintAdditionJob,
  viewIdentificationJob,
  viewVerificationJob,
} from "@/lib/jobs/job-views";
import { startFingerprintAddition, startIdentification, startVerification } from "@/lib/jobs/start-jobs";
import { defineEndpoint, type EndpointContext } from "../endpoint";
import type { ErrorName } from "../error-codes";

const jobIdParamsSchema = z.object({ jobId: z.string().min(1) });
const jobStartedSchema = z.object({ jobId: z.string() });
const SESSION_ERRORS = [
  "NoSuchCaptureSessionException",
  "InvalidSessionPurposeError",
  "CaptureSessionAlreadyUsedError",
  "CaptureSessionIsNotFinishedException",
] as const;

/** addFingerprints and verify: a pet in the path, a session in the body, a job back. */
function petJobStartEndpoint(
  verb: string,
  operationId: string,
  summary: string,
  ownError: ErrorName,
  start: (db: EndpointContext["db"], accountId: string, petId: string, sessionId: string) => Promise<{ jobId: string }>,
) {
  return defineEndpoint({
    method: "POST",
    path: `/v2/pets/{petId}${verb}`,
    operationId,
    summary,
    tag: "Biometric operations",
    bodyKind: "json",
    params: petIdParamsSchema,
    body: sessionIdBodySchema,
    successStatus: 202,
    response: jobStartedSchema,
    errors: ["NoSuchPetException", ...SESSION_ERRORS, "SpeciesMismatchError", ownError],
    audit: { action: "job.start", target: (_input, data) => (data as { jobId: string }).jobId, data: ({ params }) => ({ operation: operationId, petId: params.petId }) },
    handle: ({ params, body }, { db, accountId }) => start(db, accountId, params.petId, body.sessionId),
  });
}

export const jobEndpoints = [
  petJobStartEndpoint(
    ":addFingerprints",
    "addFingerprints",
    "Start adding a registration session's fingerprints to a pet",
    "PetAlreadyHasFingerprintAdditionJobException",
    startFingerprintAddition,
  ),
  petJobStartEndpoint(":verify", "verifyPet", "Start verifying a verification session against a pet (1:1)", "PetHasNoFingerprintException", startVerification),
  defineEndpoint({
    method: "POST",
    path: "/v2/pets:identify",
    operationId: "identifyPet",
    summary: "Start identifying an identification session among the account's pets (1:N)",
    tag: "Biometric operations",
    bodyKind: "json",
    body: sessionIdBodySchema,
    successStatus: 202,
    response: jobStartedSchema,
    errors: ["IdentificationPlanSelectionRequiredError", "IdentificationNotInPlanError", ...SESSION_ERRORS, "NoSuchSearchPoolError"],
    audit: { action: "job.start", target: (_input, data) => (data as { jobId: string }).jobId, data: () => ({ operation: "identifyPet" }) },
    handle: ({ body }, { db, account }) => startIdentification(db, account, body.sessionId),
  }),
  defineEndpoint({
    method: "GET",
    path: "/v2/fingerprint-addition-jobs/{jobId}",
    operationId: "getFingerprintAdditionJob",
    summary: "Get a fingerprint addition job",
    tag: "Jobs",
    params: jobIdParamsSchema,
    successStatus: 200,
    response: fingerprintAdditionJobSchema,
    errors: ["NoSuchFingerprintAdditionJobException"],
    handle: async ({ params }, { db, accountId }) => {
      const job = await viewFingerprintAdditionJob(db, accountId, params.jobId);
      // SUCCESS committed with the enrolment, whichever process ran the job: before the client learns
      // it, no process may still answer the pet's view (hasFingerprint) from memory as it was.
      if (job.status === "SUCCESS") await awaitCacheInvalidation();
      return job;
    },
  }),
  defineEndpoint({
    method: "GET",
    path: "/v2/verification-jobs/{jobId}",
    operationId: "getVerificationJob",
    summary: "Get a verification job",
    tag: "Jobs",
    params: jobIdParamsSchema,
    successStatus: 200,
    response: verificationJobSchema,
    errors: ["NoSuchPetVerificationJobException"],
    handle: ({ params }, { db, accountId }) => viewVerificationJob(db, accountId, params.jobId),
  }),
  defineEndpoint({
    method: "GET",
    path: "/v2/identification-jobs/{jobId}",
    operationId: "getIdentificationJob",
    summary: "Get an identification job",
    tag: "Jobs",
    params: jobIdParamsSchema,
    successStatus: 200,
    response: identificationJobSchema,
    errors: ["NoSuchPetIdentificationJobException"],
    handle: ({ params }, { db, accountId }) => viewIdentificationJob(db, accountId, params.jobId),
  }),
];
