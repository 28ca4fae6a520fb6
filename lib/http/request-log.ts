import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { logInfo, withRequestId } from "@/lib/log";
import { metrics } from "@/lib/metrics";

// Every request the server's door sees gets a request id (the client's X-Request-Id when it is a plain token, else a
// new UUID), sent back as X-Request-Id and carried by every log line written while it is served; when the answer is
// sent (or the client goes away) one access line is logged and its latency is observed for /metrics.

export const REQUEST_ID_HEADER = "x-request-id";
const PLAIN_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** An access line's path is cut to this many characters (a target can be as long as the header limit). */
const LOGGED_PATH_CHARS = 200;

/** The client's request id when it is a plain token of at most 128 characters, otherwise a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && PLAIN_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Starts observing one request: sets X-Request-Id on the response and, once it closes, logs the access line and
 * observes the latency under `route()` (a low-cardinality name: the contract's template for /v2, a fixed name for the
 * rest). Runs `serve` with the request id in the log context and returns what it returns.
 */
export function observeRequest<T>(req: IncomingMessage, res: ServerResponse, route: () => string, serve: () => T): T {
  const requestId = requestIdOf(req);
  const started = performance.now();
  res.setHeader(REQUEST_ID_HEADER, requestId);
  res.once("close", () => {
    const seconds = (performance.now() - started) / 1000;
    const method = METHODS.has(req.method ?? "") ? req.method! : "other";
    const name = route();
    const status = res.headersSent ? res.statusCode : 0;
    metrics().httpRequestSeconds.observe({ method, route: name, status: String(status) }, seconds);
    const path = (req.url ?? "/").split("?")[0].slice(0, LOGGED_PATH_CHARS);
    withRequestId(requestId, () =>
      logInfo("request", { method, path, route: name, status, ms: Math.round(seconds * 10_000) / 10, ...(res.writableFinished ? {} : { aborted: true }) }),
    );
  });
  return withRequestId(requestId, serve);
}
