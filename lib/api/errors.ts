import { httpStatus, wireCode, type ErrorName } from "./error-codes";
import { jsonAnswer, type ApiAnswer } from "./exchange";

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

/** The error envelope of one error name: `{"errors":[{"code":"SERVICEB2B…","details":…}]}` with its status. */
export function errorAnswer(name: ErrorName, details?: ValidationDetails, retryAfterSeconds?: number): ApiAnswer {
  const error = details ? { code: wireCode(name), details } : { code: wireCode(name) };
  const headers = retryAfterSeconds !== undefined ? { "retry-after": String(retryAfterSeconds) } : undefined;
  return jsonAnswer(httpStatus(name), { errors: [error] }, headers);
}
