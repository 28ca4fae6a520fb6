import { z } from "zod";
import { defineEndpoint } from "@/lib/api/endpoint";
import { sessionIdBodySchema } from "@/lib/capture-sessions/schemas";
import { petIdParamsSchema } from "@/lib/pets/schemas";
import {
  fingerprintAdditionJobSchema,
  identificationJobSchema,
  verificationJobSchema,
  viewFingerprintAdditionJob,
  viewIdentificationJob,
  viewVerificationJob,
} from "./job-views";
import { startFingerprintAddition, startIdentification, startVerification } from "./start-jobs";

const jobIdParamsSchema = z.object({ jobId: z.string().min(1) });
const jobStartedSchema = z.object({ jobId: z.string() });
const SESSION_ERRORS = [
  "NoSuchCaptureSessionException",
  "InvalidSessionPurposeError",
  "CaptureSessionAlreadyUsedError",
  "CaptureSessionIsNotFinishedException",
] as const;

export const jobEndpoints = [
  defineEndpoint({
    method: "POST",
    path: "/v2/pets/{petId}:addFingerprints",
    operationId: "addFingerprints",
    summary: "Start adding a registration session's fingerprints to a pet",
    tag: "Biometric operations",
    bodyKind: "json",
    params: petIdParamsSchema,
    body: sessionIdBodySchema,
    successStatus: 202,
    response: jobStartedSchema,
    errors: ["NoSuchPetException", ...SESSION_ERRORS, "SpeciesMismatchError", "PetAlreadyHasFingerprintAdditionJobException"],
    handle: ({ params, body }, { db, accountId }) => startFingerprintAddition(db, accountId, params.petId, body.sessionId),
  }),
  defineEndpoint({
    method: "POST",
    path: "/v2/pets/{petId}:verify",
    operationId: "verifyPet",
    summary: "Start verifying a verification session against a pet (1:1)",
    tag: "Biometric operations",
    bodyKind: "json",
    params: petIdParamsSchema,
    body: sessionIdBodySchema,
    successStatus: 202,
    response: jobStartedSchema,
    errors: ["NoSuchPetException", ...SESSION_ERRORS, "SpeciesMismatchError", "PetHasNoFingerprintException"],
    handle: ({ params, body }, { db, accountId }) => startVerification(db, accountId, params.petId, body.sessionId),
  }),
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
    handle: ({ params }, { db, accountId }) => viewFingerprintAdditionJob(db, accountId, params.jobId),
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
