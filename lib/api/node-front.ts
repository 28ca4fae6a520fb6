import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { NO_CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from "@/lib/http/security-headers";
import { logError } from "@/lib/log";
import { errorResponse } from "./errors";
import { malformedPathResponse } from "./malformed-path";
import { handleV2Request } from "./v2";

// The /v2 API served from plain Node `http`, in front of Next (scripts/server.mjs): the same one
// wrapper (lib/api/handle-request.ts) behind Node's request and response instead of Next's router,
// proxy and response pipeline, which cost more per call than everything the API does
// (docs/benchmarks.md). Next still serves everything else, and the few /v2 requests whose answer
// it defines (see claimsApiRequest).

const OPENAPI_PATH = "/v2/openapi.json";

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

/**
 * After an oversized body was refused, the rest of it is read and thrown away, and the answer ends
 * (and a `connection: close` request's socket closes) only once it has all arrived: closing at once
 * would cut the client's upload with EPIPE, often before it read the 400. Beyond this much the
 * connection is closed anyway: nobody needs to send more.
 */
const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The request body as a web stream (read as the wrapper asks for it, with back-pressure), and a way to
 * abandon it once the answer is known: whatever was not read is discarded, never buffered.
 */
function requestBody(req: IncomingMessage): { stream: ReadableStream<Uint8Array>; abandon(): Promise<void> | undefined } {
  // Set once the stream is closed, errored or abandoned: later events of the request are ignored.
  let settled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          if (settled) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.on("end", () => {
          if (settled) return;
          settled = true;
          controller.close();
        });
        // The client went away before sending the length it declared.
        req.on("close", () => {
          if (settled || req.complete) return;
          settled = true;
          controller.error(new Error("request body aborted"));
        });
        req.on("error", (error) => {
          if (settled) return;
          settled = true;
          controller.error(error);
        });
      },
      pull() {
        req.resume();
      },
      cancel() {
        settled = true;
        req.pause();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
  return {
    stream,
    abandon() {
      settled = true;
      if (req.complete || req.destroyed) return undefined;
      let discarded = 0;
      req.removeAllListeners("data");
      req.on("data", (chunk: Buffer) => {
        discarded += chunk.byteLength;
        if (discarded > MAX_DISCARDED_BODY_BYTES) req.socket.destroy();
      });
      const received = new Promise<void>((resolve) => {
        req.once("end", resolve);
        req.once("close", resolve);
      });
      req.resume();
      return received;
    },
  };
}

function webRequest(req: IncomingMessage): { request: Request; abandonBody(): Promise<void> | undefined } {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? "GET";
  const body = method !== "GET" && method !== "HEAD" ? requestBody(req) : undefined;
  // The wrapper reads only the path and query of the URL; the Host header may hold anything.
  const request = new Request(new URL(req.url ?? "/", "http://localhost"), {
    method,
    headers,
    ...(body ? { body: body.stream, duplex: "half" } : {}),
  } as RequestInit);
  return { request, abandonBody: () => body?.abandon() };
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

/** Whether an answer is worth compressing: JSON of some size, not already encoded. */
export function shouldCompress(headers: Headers, byteLength: number): boolean {
  return byteLength >= MIN_COMPRESSED_BYTES && !headers.has("content-encoding") && /\bjson\b/i.test(headers.get("content-type") ?? "");
}

/**
 * Writes the answer at once; with `received` (the rest of the request body), ends it once that has
 * arrived. JSON answers are gzipped for clients that accept it, as Next did before the front (zlib's
 * thread pool does the work, not the event loop).
 */
async function writeResponse(res: ServerResponse, response: Response, received?: Promise<void>, acceptEncoding?: string): Promise<void> {
  let body = response.status === 204 ? null : Buffer.from(await response.arrayBuffer());
  for (const { key, value } of [...SECURITY_HEADERS, NO_CONTENT_SECURITY_POLICY]) res.setHeader(key, value);
  response.headers.forEach((value, key) => res.setHeader(key, value));
  if (body && shouldCompress(response.headers, body.byteLength)) {
    res.setHeader("vary", [response.headers.get("vary"), "accept-encoding"].filter(Boolean).join(", "));
    if (acceptsGzip(acceptEncoding)) {
      body = await gzipAsync(body);
      res.setHeader("content-encoding", "gzip");
    }
  }
  if (body) res.setHeader("content-length", body.byteLength);
  res.writeHead(response.status);
  if (!received) return void res.end(body ?? undefined);
  if (body) res.write(body);
  await received;
  res.end();
}

/** Answers one claimed /v2 request (see claimsApiRequest) through the API's wrapper. Never throws. */
export async function serveApiRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const malformed = malformedPathResponse(pathOf(req.url ?? "/"));
    if (malformed) return await writeResponse(res, malformed);
    const { request, abandonBody } = webRequest(req);
    const response = await handleV2Request(request);
    await writeResponse(res, response, abandonBody(), req.headers["accept-encoding"]);
  } catch (error) {
    // The wrapper answers every error itself; this is a failure of the adapter (a header Node refuses).
    logError("api-front-failed", error, { method: req.method });
    if (res.headersSent) res.destroy();
    else {
      res.setHeader("connection", "close");
      await writeResponse(res, errorResponse("InternalServerError"));
    }
  }
}

export interface ApiFront {
  claims(target: string): boolean;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/**
 * Called from instrumentation.ts, in Next's own module graph: the front (scripts/server.mjs) gets the
 * API from there once Next has started, so that the API and the dashboard share one database client,
 * key cache, rate limiter, metering buffer and job queue (all kept on globalThis).
 */
export function exposeApiFront(): void {
  const handover = (globalThis as unknown as { __rhinariumApiFrontHandover?: (front: ApiFront) => void }).__rhinariumApiFrontHandover;
  handover?.({ claims: claimsApiRequest, serve: serveApiRequest });
}
