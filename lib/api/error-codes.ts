// The one table of the API's error codes. Everything else refers to these names; the wire code is
// "SERVICEB2B" + the five digits, and the HTTP status comes from here too.

interface ErrorCodeEntry {
  digits: string;
  status: 400 | 401 | 402 | 403 | 404 | 429 | 500 | 503;
  description: string;
  /** False for codes the contract lists but this service can never produce (see `why`). */
  reachable: boolean;
  why?: string;
}

export const ERROR_CODES = {
  InvalidApiKeyException: { digits: "10000", status: 401, reachable: true, description: "API key wrong, missing or deactivated" },
  ValidationError: { digits: "10001", status: 400, reachable: true, description: "Missing required parameter, wrong type or format, or a value outside an enumeration; details names the failing fields" },
  PetLimitExceededError: { digits: "10005", status: 402, reachable: true, description: "Maximum number of pets of the plan exceeded" },
  AccountApiAccessSuspended: { digits: "10010", status: 403, reachable: true, description: "Account API use suspended because of a payment-method problem" },
  IdentificationNotInPlanError: { digits: "10011", status: 402, reachable: true, description: "Identify called by an account whose plan lacks identification" },
  IdentificationPlanSelectionRequiredError: { digits: "10012", status: 402, reachable: true, description: "Identify called before any plan was selected" },
  NoSuchPetException: { digits: "20000", status: 404, reachable: true, description: "Pet id does not exist or the pet was deleted" },
  NoSuchFingerprintAdditionJobException: { digits: "20004", status: 404, reachable: true, description: "Unknown fingerprint addition job id" },
  NoSuchPetVerificationJobException: { digits: "20005", status: 404, reachable: true, description: "Unknown verification job id" },
  NoSuchPetIdentificationJobException: { digits: "20006", status: 404, reachable: true, description: "Unknown identification job id" },
  PetAlreadyHasFingerprintAdditionJobException: { digits: "20007", status: 400, reachable: true, description: "The pet already has a fingerprint addition in progress" },
  PetHasNoFingerprintException: { digits: "20009", status: 400, reachable: true, description: "Verification requested for a pet with no registered fingerprint" },
  NoSuchCaptureSessionException: { digits: "20010", status: 404, reachable: true, description: "Session id does not exist or has expired" },
  NoPetIdCaptureSessionException: { digits: "20011", status: 400, reachable: true, description: "Session with purpose PET_PROFILE_REGISTRATION or PET_VERIFICATION created without petId" },
  CaptureSessionIsNotFinishedException: { digits: "20012", status: 400, reachable: true, description: "Session not finished: too few fingerprint images or no appearance image" },
  InvalidSessionPurposeError: { digits: "20013", status: 400, reachable: true, description: "Session purpose does not fit the operation" },
  CaptureSessionAlreadyUsedError: { digits: "20014", status: 400, reachable: true, description: "A session that was already used is used again" },
  SpeciesMismatchError: { digits: "20015", status: 400, reachable: true, description: "Session species differs from the pet's species" },
  NoSuchSearchPoolError: { digits: "20016", status: 404, reachable: true, description: "The search pool the account is configured to search does not exist" },
  MultipleCaptureSessionsError: {
    digits: "20017", status: 400, reachable: false,
    description: "Fingerprint identifiers of an earlier interface version are spread over more than one capture session",
    why: "This service never had an earlier interface version, so no such identifiers exist.",
  },
  UnknownSpeciesException: {
    digits: "30002", status: 500, reachable: false, description: "Unknown species",
    why: "Species is validated against DOG|CAT at the door (10001) and stored as a database enum.",
  },
  // Additions of this service, for cases the contract has no code for (see the README, API notes).
  RouteNotFoundError: { digits: "10404", status: 404, reachable: true, description: "No endpoint has this method and path" },
  RateLimitExceededError: {
    digits: "10429", status: 429, reachable: true,
    description: "Too many requests with this API key; wait the Retry-After header's seconds, then retry",
  },
  InternalServerError: { digits: "10500", status: 500, reachable: true, description: "Unexpected failure; retry with exponential backoff" },
  ServiceUnavailableError: {
    digits: "10503", status: 503, reachable: true,
    description: "The database is unreachable for now; retry with exponential backoff (Retry-After gives a first delay)",
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorName = keyof typeof ERROR_CODES;

export function wireCode(name: ErrorName): string {
  return `SERVICEB2B${ERROR_CODES[name].digits}`;
}

export function httpStatus(name: ErrorName): number {
  return ERROR_CODES[name].status;
}
