// The expected failures of the domain features (pets, capture sessions, uploads, jobs), in their own
// words. Features throw them; each front maps them once: the HTTP layer to the API's error table
// (lib/api/errors.ts, `errorNameOf`), the dashboard to a sentence (lib/dashboard/action-client.ts).

export type DomainFailure =
  /** An input the feature refuses; `details` names the fields. */
  | "InvalidInput"
  | "PetNotFound"
  | "PetLimitReached"
  | "PetHasNoFingerprint"
  | "FingerprintAdditionInProgress"
  | "CaptureSessionNotFound"
  | "CaptureSessionNeedsPet"
  | "CaptureSessionNotFinished"
  | "CaptureSessionAlreadyUsed"
  | "WrongSessionPurpose"
  | "SpeciesMismatch"
  | "NoPlanSelected"
  | "IdentificationNotInPlan"
  | "SearchPoolNotFound"
  | "FingerprintAdditionJobNotFound"
  | "VerificationJobNotFound"
  | "IdentificationJobNotFound";

export type FieldErrors = Record<string, string[]>;

export class DomainError extends Error {
  constructor(
    readonly failure: DomainFailure,
    readonly details?: FieldErrors,
  ) {
    super(failure);
  }
}

export function invalidInput(field: string, message: string): DomainError {
  return new DomainError("InvalidInput", { [field]: [message] });
}
