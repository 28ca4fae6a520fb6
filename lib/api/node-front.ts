import type { IncomingMessage, ServerResponse } from "node:http";
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
 * The request body as a web stream. Unlike Readable.toWeb, cancelling it (the wrapper's body cap)
 * does not destroy the socket before the answer is written: the rest of the body is left unread and
 * the connection is closed after the answer.
 */
function requestBody(req: IncomingMessage, onCancel: () => void): ReadableStream<Uint8Array> {
  let finished = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.on("end", () => {
          finished = true;
          controller.close();
        });
        // The client went away before sending the length it declared.
        req.on("close", () => {
          if (!finished && !req.complete) controller.error(new Error("request body aborted"));
        });
        req.on("error", (error) => controller.error(error));
      },
      pull() {
        req.resume();
      },
      cancel() {
        finished = true;
        req.pause();
        onCancel();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
}

function webRequest(req: IncomingMessage, onCancel: () => void): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  // The wrapper reads only the path and query of the URL; the Host header may hold anything.
  return new Request(new URL(req.url ?? "/", "http://localhost"), {
    method,
    headers,
    ...(hasBody ? { body: requestBody(req, onCancel), duplex: "half" } : {}),
  } as RequestInit);
}

async function writeResponse(res: ServerResponse, response: Response, closeConnection: boolean): Promise<void> {
  const body = response.status === 204 ? null : Buffer.from(await response.arrayBuffer());
  for (const { key, value } of [...SECURITY_HEADERS, NO_CONTENT_SECURITY_POLICY]) res.setHeader(key, value);
  response.headers.forEach((value, key) => res.setHeader(key, value));
  if (body) res.setHeader("content-length", body.byteLength);
  if (closeConnection) res.setHeader("connection", "close");
  res.writeHead(response.status);
  res.end(body ?? undefined);
}

/** Answers one claimed /v2 request (see claimsApiRequest) through the API's wrapper. Never throws. */
export async function serveApiRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let bodyCut = false;
  try {
    const malformed = malformedPathResponse(pathOf(req.url ?? "/"));
    const response = malformed ?? (await handleV2Request(webRequest(req, () => (bodyCut = true))));
    await writeResponse(res, response, bodyCut);
  } catch (error) {
    // The wrapper answers every error itself; this is a failure of the adapter (a header Node refuses).
    logError("api-front-failed", error, { method: req.method });
    if (res.headersSent) res.destroy();
    else await writeResponse(res, errorResponse("InternalServerError"), true);
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
