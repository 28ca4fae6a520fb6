import { httpStatus, wireCode, type ErrorName } from "./error-codes";

export type ValidationDetails = Record<string, string[]>;

/** A failure the contract names: thrown by domain code, turned into the error envelope by the wrapper. */
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

export function errorResponse(name: ErrorName, details?: ValidationDetails, retryAfterSeconds?: number): Response {
  const error = details ? { code: wireCode(name), details } : { code: wireCode(name) };
  const headers = retryAfterSeconds !== undefined ? { "retry-after": String(retryAfterSeconds) } : undefined;
  return Response.json({ errors: [error] }, { status: httpStatus(name), headers });
}
