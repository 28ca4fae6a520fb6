import { errorAnswer, validationError } from "./errors";
import { webResponse, type ApiAnswer } from "./exchange";

/**
 * Next decodes the catch-all's path segments before any handler runs and answers a bad escape
 * ("/v2/pets/%E0%A4%A") with its own plain-text 500. The proxy asks this first: a /v2 path that is
 * not valid percent-encoded UTF-8 is a client error in the API's shape (400 10001 `details.path`).
 */
export function malformedPathAnswer(pathname: string): ApiAnswer | null {
  try {
    decodeURIComponent(pathname);
    return null;
  } catch {
    const { errorName, details } = validationError("path", "must be valid percent-encoded UTF-8");
    return errorAnswer(errorName, details);
  }
}

/**
 * A /v2 target holding an encoded NUL (in its path or query) that the API does not answer itself
 * (Next would normalise it first: see claimsApiRequest): the door refuses such targets before Next,
 * and for the API's paths it answers in the API's shape (400 10001 `details.target`).
 */
export function nulTargetAnswer(target: string): ApiAnswer | null {
  if (!target.startsWith("/v2/") || !/%00/.test(target)) return null;
  const { errorName, details } = validationError("target", "must not hold a NUL character");
  return errorAnswer(errorName, details);
}

/** The same as malformedPathAnswer, as a web `Response` for Next's proxy. */
export function malformedPathResponse(pathname: string): Response | null {
  const answer = malformedPathAnswer(pathname);
  return answer && webResponse(answer);
}
