import { httpStatus, wireCode, type ErrorName } from "./error-codes";

export type ValidationDetails = Record<string, string[]>;

/** A failure the contract names: thrown by domain code, turned into the error envelope by the wrapper. */
export class ApiError extends Error {
  constructor(
    readonly errorName: ErrorName,
    readonly details?: ValidationDetails,
  ) {
    super(errorName);
  }
}

export function validationError(field: string, message: string): ApiError {
  return new ApiError("ValidationError", { [field]: [message] });
}

export function errorResponse(name: ErrorName, details?: ValidationDetails): Response {
  const error = details ? { code: wireCode(name), details } : { code: wireCode(name) };
  return Response.json({ errors: [error] }, { status: httpStatus(name) });
}
