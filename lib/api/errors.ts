import type { DomainError, DomainFailure, FieldErrors } from "@/lib/domain-errors";
import { httpStatus, wireCode, type ErrorName } from "./error-codes";
import { jsonAnswer, type ApiAnswer } from "./exchange";

export type ValidationDetails = FieldErrors;

/** A failure the contract names, thrown by the HTTP layer itself; turned into the error envelope by the wrapper. */
export class ApiError extends Error {
  constructor(
    readonly errorName: ErrorName,
    readonly details?: ValidationDetails,
    /** Sent as the Retry-After header (429, 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(errorName);
  }
}

export function validationError(field: string, message: string): ApiError {
  return new ApiError("ValidationError", { [field]: [message] });
}

/** The one place a feature's expected failure (lib/domain-errors.ts) meets the API's error table. */
const ERROR_NAME_OF_FAILURE = {
  InvalidInput: "ValidationError",
  PetNotFound: "NoSuchPetException",
  PetLimitReached: "PetLimitExceededError",
  PetHasNoFingerprint: "PetHasNoFingerprintException",
  FingerprintAdditionInProgress: "PetAlreadyHasFingerprintAdditionJobException",
  CaptureSessionNotFound: "NoSuchCaptureSessionException",
  CaptureSessionNeedsPet: "NoPetIdCaptureSessionException",
  CaptureSessionNotFinished: "CaptureSessionIsNotFinishedException",
  CaptureSessionAlreadyUsed: "CaptureSessionAlreadyUsedError",
  WrongSessionPurpose: "InvalidSessionPurposeError",
  SpeciesMismatch: "SpeciesMismatchError",
  NoPlanSelected: "IdentificationPlanSelectionRequiredError",
  IdentificationNotInPlan: "IdentificationNotInPlanError",
  SearchPoolNotFound: "NoSuchSearchPoolError",
  FingerprintAdditionJobNotFound: "NoSuchFingerprintAdditionJobException",
  VerificationJobNotFound: "NoSuchPetVerificationJobException",
  IdentificationJobNotFound: "NoSuchPetIdentificationJobException",
} as const satisfies Record<DomainFailure, ErrorName>;

export function errorNameOf(failure: DomainFailure): ErrorName {
  return ERROR_NAME_OF_FAILURE[failure];
}

/** A domain error's envelope: the same bytes as the ApiError of its error name. */
export function domainErrorAnswer(error: DomainError): ApiAnswer {
  return errorAnswer(errorNameOf(error.failure), error.details);
}

/** The error envelope of one error name: `{"errors":[{"code":"SERVICEB2B…","details":…}]}` with its status. */
export function errorAnswer(name: ErrorName, details?: ValidationDetails, retryAfterSeconds?: number): ApiAnswer {
  const error = details ? { code: wireCode(name), details } : { code: wireCode(name) };
  const headers = retryAfterSeconds !== undefined ? { "retry-after": String(retryAfterSeconds) } : undefined;
  return jsonAnswer(httpStatus(name), { errors: [error] }, headers);
}
