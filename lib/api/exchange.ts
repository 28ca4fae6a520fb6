// What the API's one wrapper (lib/api/handle-request.ts) takes and gives: plain data, not web
// `Request`/`Response` objects. The Node front (lib/api/node-front.ts) builds an ApiRequest from
// Node's request and writes the ApiAnswer to Node's response; building and reading the web objects
// instead cost more per call than the wrapper's own work (docs/benchmarks.md). Where Next needs a
// web `Response` (proxy.ts), webResponse adapts an answer.

import { JsonText } from "@/lib/json-text";

/** One /v2 request as the wrapper reads it. */
export interface ApiRequest {
  method: string;
  /** The request target: path and query as sent, e.g. "/v2/pets/abc?x=1". */
  target: string;
  /** Header values by lower-case name (as Node's `IncomingMessage.headers`). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client's address as the server believes it (the socket's, or a trusted proxy's X-Forwarded-For); absent in-process. */
  client?: string;
  /**
   * Reads the body, at most `limit` bytes: the bytes, or null as soon as more than `limit` arrived (the
   * rest is left unread, for the front to discard). Rejects when the client goes away before the end.
   */
  readBody(limit: number): Promise<Uint8Array | null>;
}

/** One answer as the wrapper gives it; the front adds the security headers, the length and gzip. */
export interface ApiAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** JSON text, or null for no body (204). */
  body: string | null;
}

const JSON_HEADERS = { "content-type": "application/json" };

/** A JSON answer: `value` serialised as `Response.json` would (same bytes, same content type). */
export function jsonAnswer(status: number, value: unknown, headers?: Record<string, string>): ApiAnswer {
  return { status, headers: headers ? { ...JSON_HEADERS, ...headers } : { ...JSON_HEADERS }, body: JSON.stringify(value) };
}

/** The success envelope `{ success: true, data }` as a JSON answer. */
export function successAnswer(status: number, data: unknown): ApiAnswer {
  if (data instanceof JsonText) return { status, headers: { ...JSON_HEADERS }, body: `{"success":true,"data":${data.text}}` };
  return jsonAnswer(status, { success: true, data });
}

/** A header's value; repeated headers joined with ", " (as `Headers.get`). */
export function headerOf(req: Pick<ApiRequest, "headers">, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

// Characters a URL parser leaves as they are in a path and query: a target made of these alone (and
// with no dot segment) splits into the path and query `new URL` would give, without parsing a URL.
const PLAIN_TARGET = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;
const DOT_SEGMENT = /\/(\.|%2e)/i;

/** The path and the query string (without "?") of a request target, as `new URL(target, base)` reads them. */
export function splitTarget(target: string): { pathname: string; search: string } {
  if (!PLAIN_TARGET.test(target) || DOT_SEGMENT.test(target)) {
    const url = new URL(target, "http://localhost");
    return { pathname: url.pathname, search: url.search.slice(1) };
  }
  const queryAt = target.indexOf("?");
  return queryAt === -1 ? { pathname: target, search: "" } : { pathname: target.slice(0, queryAt), search: target.slice(queryAt + 1) };
}

/** The answer as a web `Response`, for Next (proxy.ts). */
export function webResponse(answer: ApiAnswer): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
