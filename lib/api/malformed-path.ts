import { errorResponse, validationError } from "./errors";

/**
 * Next decodes the catch-all's path segments before any handler runs and answers a bad escape
 * ("/v2/pets/%E0%A4%A") with its own plain-text 500. The proxy asks this first: a /v2 path that is
 * not valid percent-encoded UTF-8 is a client error in the API's shape (400 10001 `details.path`).
 */
export function malformedPathResponse(pathname: string): Response | null {
  try {
    decodeURIComponent(pathname);
    return null;
  } catch {
    const { errorName, details } = validationError("path", "must be valid percent-encoded UTF-8");
    return errorResponse(errorName, details);
  }
}
