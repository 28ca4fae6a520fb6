import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { readEnv } from "@/lib/env";
import { discardRest } from "@/lib/http/discard-body";
import { admitNextRequest, clientAddress, trustedProxiesOf } from "@/lib/http/front-guard";
import { observeRequest } from "@/lib/http/request-log";
import { API_SECURITY_HEADERS } from "@/lib/http/security-headers";
import { healthAnswer, HEALTH_PATHS } from "@/lib/server/health";
import { METRICS_PATH, metricsAnswer } from "@/lib/server/metrics-endpoint";
import { logError } from "@/lib/log";
import { errorAnswer } from "./errors";
import type { ApiAnswer, ApiRequest } from "./exchange";
import { malformedPathAnswer, nulTargetAnswer } from "./malformed-path";
import { handleV2Request, v2RouteOf } from "./v2";
import { processSlot } from "@/lib/process-state";

// The /v2 API served from plain Node `http`, in front of Next (scripts/server.mjs): the same one
// wrapper (lib/api/handle-request.ts) behind Node's request and response instead of Next's router,
// proxy and response pipeline, which cost more per call than everything the API does
// (docs/benchmarks.md). Next still serves everything else, and the few /v2 requests whose answer
// it defines (see claimsApiRequest).

const OPENAPI_PATH = "/v2/openapi.json";
/** The human-readable reference: a page of the dashboard's app (app/api-reference), linked from /v2/docs. */
export const DOCS_PATH = "/v2/docs";
export const API_REFERENCE_PATH = "/api-reference";

function pathOf(target: string): string {
  const queryAt = target.indexOf("?");
  return queryAt === -1 ? target : target.slice(0, queryAt);
}

/**
 * Whether a request target is the API's to answer here. Left to Next: the OpenAPI document (a page
 * of its own), and paths Next normalises with a 308 (an empty segment, a trailing slash, a `.` or
 * `..` segment, percent-encoded or not), which come back here once normalised; also any target
 * that is not a plain path (absolute-form), which Next parses its own way.
 */
export function claimsApiRequest(target: string): boolean {
  if (!target.startsWith("/v2/")) return false;
  const path = pathOf(target);
  if (path === OPENAPI_PATH) return false;
  const plain = path.replace(/%2e/gi, ".");
  return !(plain.includes("//") || plain.endsWith("/") || /\/\.\.?(\/|$)/.test(plain));
}

const NO_BODY = new Uint8Array();

/**
 * Reads the request body up to `limit` bytes (see ApiRequest.readBody). Past the limit it stops and
 * leaves the rest unread, the request paused, for discardRest once the answer is known.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    if (req.destroyed) return reject(new Error("request body aborted"));
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      req.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limit) {
        stop();
        req.pause();
        resolve(null);
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, total));
    };
    // The client went away before sending the length it declared.
    const onClose = () => {
      if (req.complete) return;
      stop();
      reject(new Error("request body aborted"));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("close", onClose);
    req.on("error", onError);
  });
}

/** Node's request as the wrapper reads it (plain data; see lib/api/exchange.ts). */
let trustedProxiesRead: ReadonlySet<string> | undefined;
function trustedProxies(): ReadonlySet<string> {
  return (trustedProxiesRead ??= trustedProxiesOf(readEnv().TRUSTED_PROXIES));
}

function apiRequest(req: IncomingMessage): { request: ApiRequest; hasBody: boolean } {
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const request: ApiRequest = {
    method,
    target: req.url ?? "/",
    headers: req.headers,
    client: clientAddress(req, trustedProxies()),
    readBody: (limit) => (hasBody ? readBody(req, limit) : Promise.resolve(NO_BODY)),
  };
  return { request, hasBody };
}

/** Answers smaller than this go as they are: compressing them saves less than it costs. */
export const MIN_COMPRESSED_BYTES = 1024;
const gzipAsync = promisify(gzip);

/** Whether an Accept-Encoding header accepts gzip (by name or `*`, with a quality above 0). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  let gzipQuality: number | undefined;
  let anyQuality: number | undefined;
  for (const entry of acceptEncoding.split(",")) {
    const [name, ...params] = entry.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (name.trim() === "gzip") gzipQuality = quality;
    else if (name.trim() === "*") anyQuality = quality;
  }
  const quality = gzipQuality ?? anyQuality ?? 0;
  return Number.isFinite(quality) && quality > 0;
}

/** Whether an answer is worth compressing: JSON of some size, not already encoded. Header names lower-case. */
export function shouldCompress(headers: Readonly<Record<string, string>>, byteLength: number): boolean {
  return byteLength >= MIN_COMPRESSED_BYTES && !headers["content-encoding"] && /\bjson\b/i.test(headers["content-type"] ?? "");
}

/** Sent with every answer, before the answer's own headers. */
const FRONT_HEADERS: Readonly<Record<string, string>> = Object.fromEntries(API_SECURITY_HEADERS.map(({ key, value }) => [key, value]));

/**
 * Writes the answer at once; with `received` (the rest of the request body), ends it once that has
 * arrived. JSON answers are gzipped for clients that accept it, as Next did before the front (zlib's
 * thread pool does the work, not the event loop). A string body goes in one write with the headers.
 * Synchronous (no promise) when there is nothing to wait for: no gzip, no body left to discard.
 */
function writeAnswer(res: ServerResponse, answer: ApiAnswer, received?: Promise<void>, acceptEncoding?: string): Promise<void> | void {
  const headers: Record<string, string | number> = { ...FRONT_HEADERS, ...answer.headers };
  const body = answer.body;
  if (body === null) return send(res, answer.status, headers, null, received);
  const length = Buffer.byteLength(body);
  if (shouldCompress(answer.headers, length)) {
    headers.vary = answer.headers.vary ? `${answer.headers.vary}, accept-encoding` : "accept-encoding";
    if (acceptsGzip(acceptEncoding)) {
      headers["content-encoding"] = "gzip";
      return gzipAsync(body).then((gzipped) => {
        headers["content-length"] = gzipped.byteLength;
        return send(res, answer.status, headers, gzipped, received);
      });
    }
  }
  headers["content-length"] = length;
  return send(res, answer.status, headers, body, received);
}

/** Headers (content-length included), then the body; the end waits for `received`. */
function send(res: ServerResponse, status: number, headers: Record<string, string | number>, body: string | Buffer | null, received?: Promise<void>): Promise<void> | void {
  res.writeHead(status, headers);
  if (!received) return void res.end(body ?? undefined);
  if (body !== null) res.write(body);
  return received.then(() => void res.end());
}

/**
 * The front over one wrapper: answers a claimed /v2 request (see claimsApiRequest) with `handle`'s
 * answer. Never throws.
 */
export function apiFront(handle: (request: ApiRequest) => Promise<ApiAnswer>, routeOf: (method: string, path: string) => string = () => "/v2") {
  return function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req.url ?? "/");
    return observeRequest(req, res, () => (path === DOCS_PATH ? DOCS_PATH : routeOf(req.method ?? "GET", path)), () => answerApi(req, res, path, handle));
  };
}

async function answerApi(req: IncomingMessage, res: ServerResponse, path: string, handle: (request: ApiRequest) => Promise<ApiAnswer>): Promise<void> {
  try {
    if (path === DOCS_PATH) return void send(res, 308, { ...FRONT_HEADERS, location: API_REFERENCE_PATH, "content-length": 0 }, null, discardRest(req));
    const malformed = malformedPathAnswer(path);
    if (malformed) return await writeAnswer(res, malformed);
    const { request, hasBody } = apiRequest(req);
    const answer = await handle(request);
    const written = writeAnswer(res, answer, hasBody ? discardRest(req) : undefined, req.headers["accept-encoding"]);
    if (written) await written;
  } catch (error) {
    // The wrapper answers every error itself; this is a failure of the adapter (a header Node refuses).
    logError("api-front-failed", error, { method: req.method });
    if (res.headersSent) res.destroy();
    else {
      const failed = errorAnswer("InternalServerError");
      await writeAnswer(res, { ...failed, headers: { ...failed.headers, connection: "close" } });
    }
  }
}

/** Answers one claimed /v2 request through the API's wrapper. Never throws. */
export const serveApiRequest = apiFront(handleV2Request, v2RouteOf);

export interface ApiFront {
  claims(target: string): boolean;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Everything else: the health endpoints, then Next (`next`) for what the door admits (lib/http/front-guard.ts). */
  serveOther(req: IncomingMessage, res: ServerResponse, next: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<void>;
  /** Timeouts and the connection cap of the HTTP server. */
  configure(server: Server): void;
}

/** A request's headers must all arrive within this; its whole body within REQUEST_TIMEOUT_MS. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** Open connections at once (idle keep-alive ones close after 5 s, Node's default). */
export const MAX_CONNECTIONS = 1024;

function configureServer(server: Server): void {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.maxConnections = MAX_CONNECTIONS;
}

/** The health endpoints (no key), then Next for what the door admits. Never throws. */
export function otherRequests(trustedProxies: ReadonlySet<string>) {
  return function serveOther(req: IncomingMessage, res: ServerResponse, next: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<void> {
    const path = pathOf(req.url ?? "/");
    const own = HEALTH_PATHS.has(path) || path === METRICS_PATH;
    // Pages and assets share one label: their paths name pets and files, too many for a metric.
    return observeRequest(req, res, () => (own ? path : "dashboard"), () => answerOther(req, res, path, next, trustedProxies));
  };
}

async function answerOther(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  next: (req: IncomingMessage, res: ServerResponse) => unknown,
  trustedProxies: ReadonlySet<string>,
): Promise<void> {
  try {
    if (HEALTH_PATHS.has(path) && (req.method === "GET" || req.method === "HEAD")) {
      const { status, body } = await healthAnswer(path);
      return void send(res, status, { ...FRONT_HEADERS, "content-type": "application/json" }, req.method === "HEAD" ? null : JSON.stringify(body));
    }
    if (path === METRICS_PATH && (req.method === "GET" || req.method === "HEAD")) {
      const { status, contentType, body } = await metricsAnswer(req);
      return void send(res, status, { ...FRONT_HEADERS, "content-type": contentType, "cache-control": "no-store" }, req.method === "HEAD" ? null : body);
    }
    const refused = nulTargetAnswer(req.url ?? "");
    if (refused) return await writeAnswer(res, refused, discardRest(req));
    const admitted = await admitNextRequest(req, res, trustedProxies);
    if (admitted) await next(admitted, res);
  } catch (error) {
    logError("front-door-failed", error, { method: req.method });
    if (!res.headersSent) send(res, 500, { "content-type": "text/plain", connection: "close" }, "Internal error");
    else res.destroy();
  }
}

/**
 * Called from instrumentation.ts, in Next's own module graph: the front (scripts/server.mjs) gets the
 * API from there once Next has started, so that the API and the dashboard share one database client,
 * key cache, rate limiter, metering buffer and job queue (all in lib/process-state.ts).
 */
export function exposeApiFront(): void {
  const handover = processSlot<(front: ApiFront) => void>("apiFrontHandover").get();
  handover?.({ claims: claimsApiRequest, serve: serveApiRequest, serveOther: otherRequests(trustedProxies()), configure: configureServer });
}
