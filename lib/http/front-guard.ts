import { IncomingMessage, type ServerResponse } from "node:http";
import { MAX_UPLOAD_BYTES } from "@/lib/uploads/limits";
import { discardRest } from "./discard-body";

// The server's door (scripts/server.mjs) for every request it does not answer itself: what a
// request may cost is bounded here, before Next reads a byte of the body, so that no request
// (signed in or not) holds the event loop for long. Next parses a server action's multipart body
// on the main thread, part by part: ~168,000 tiny parts took it 5–12 s.

/** Bodies of pages outside the dashboard (sign-in, next-auth's own POSTs): small forms only. */
export const MAX_PUBLIC_BODY_BYTES = 64 * 1024;
/** Dashboard server actions: pet metadata and the like. */
export const MAX_ACTION_BODY_BYTES = 1024 * 1024;
/** Dashboard uploads (multipart server actions): the API's image cap plus form overhead. */
export const MAX_ACTION_UPLOAD_BYTES = MAX_UPLOAD_BYTES + 1024 * 1024;
/** Parts of one multipart body: an upload action sends a handful. */
export const MAX_MULTIPART_PARTS = 32;
/** Next-auth's session cookie names (plain and secure prefix). */
const SESSION_COOKIE = /(?:^|;\s*)(?:__Secure-)?next-auth\.session-token(?:\.\d+)?=/;

/**
 * The client's address: the socket's, unless the socket is a configured trusted proxy, which then
 * names the client as the last entry of X-Forwarded-For (the one it appended itself).
 */
export function clientAddress(req: Pick<IncomingMessage, "headers" | "socket">, trustedProxies: ReadonlySet<string>): string {
  const socketAddress = normaliseAddress(req.socket.remoteAddress ?? "");
  if (!trustedProxies.has(socketAddress)) return socketAddress || "unknown";
  const forwarded = req.headers["x-forwarded-for"];
  const list = (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? "")).split(",").map((s) => s.trim()).filter(Boolean);
  return list.length > 0 ? normaliseAddress(list[list.length - 1]) : socketAddress;
}

/** "::ffff:127.0.0.1" and "127.0.0.1" are one client. */
export function normaliseAddress(address: string): string {
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}

/** TRUSTED_PROXIES: comma-separated addresses of reverse proxies whose X-Forwarded-For is believed. */
export function trustedProxiesOf(value: string | undefined): Set<string> {
  return new Set((value ?? "").split(",").map((s) => normaliseAddress(s.trim())).filter(Boolean));
}

/** Answers here; a body not read yet is discarded before the answer ends (see discardRest). */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string): null {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(message), connection: "close" });
  const received = discardRest(req);
  if (!received) res.end(message);
  else {
    res.write(message);
    void received.then(() => res.end());
  }
  return null;
}

/**
 * Whether a request's Origin (when it sends one) names the host it was sent to: the Host header, or
 * the forwarded host, which only a trusted proxy's request still carries here.
 */
export function isSameOrigin(req: Pick<IncomingMessage, "headers">): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  const forwarded = req.headers["x-forwarded-host"];
  const host = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0].trim() || req.headers.host;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** The body a request of this path and type may send to Next, or null when it may send none of this type. */
export function bodyCapOf(pathname: string, contentType: string): number | null {
  const multipart = contentType.toLowerCase().startsWith("multipart/");
  if (pathname === "/dashboard" || pathname.startsWith("/dashboard/")) return multipart ? MAX_ACTION_UPLOAD_BYTES : MAX_ACTION_BODY_BYTES;
  return multipart ? null : MAX_PUBLIC_BODY_BYTES;
}

/** Number of parts in a multipart body, counted up to `max + 1` (the boundary lines, found natively). */
export function countParts(body: Buffer, boundary: string, max: number): number {
  const delimiter = Buffer.from(`--${boundary}`);
  let count = -1; // the closing delimiter ends the last part
  for (let at = body.indexOf(delimiter); at !== -1 && count <= max; at = body.indexOf(delimiter, at + delimiter.length)) count++;
  return Math.max(count, 0);
}

function boundaryOf(contentType: string): string | null {
  const match = /boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : null;
}

/** Reads the whole body up to `cap` bytes: null once more arrived (the connection is then closed). */
function readUpTo(req: IncomingMessage, cap: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    req.on("data", (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > cap) {
        req.removeAllListeners("data");
        req.pause();
        resolve(null);
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks, total)));
    req.on("error", () => resolve(null));
    req.on("close", () => {
      if (!req.complete) resolve(null);
    });
  });
}

/** A request already read, given to Next as if it came off the socket. */
function replayed(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new IncomingMessage(req.socket);
  copy.method = req.method;
  copy.url = req.url;
  copy.headers = req.headers;
  copy.rawHeaders = req.rawHeaders;
  copy.httpVersion = req.httpVersion;
  copy.httpVersionMajor = req.httpVersionMajor;
  copy.httpVersionMinor = req.httpVersionMinor;
  // Nothing more to read from the socket for this request.
  copy._read = () => {};
  copy.push(body);
  copy.push(null);
  copy.complete = true;
  return copy;
}

/**
 * Admits a request for Next, or answers it here: 400 for a target that is not a path ("*"), a
 * path that is not valid percent-encoding or a target holding an encoded NUL, 413 for a body over its cap (64 KiB outside the
 * dashboard, 1 MiB for dashboard actions, 11 MiB for multipart uploads with at most 32 parts; 415
 * for multipart outside the dashboard), 401 for a multipart upload without a session cookie (before
 * its body is read). The request Next gets carries the client address the server believes in
 * X-Forwarded-For. A server action whose Origin is another host is refused with 403. Multipart and chunked bodies are read here, checked, and handed to Next as read.
 */
export async function admitNextRequest(req: IncomingMessage, res: ServerResponse, trustedProxies: ReadonlySet<string>): Promise<IncomingMessage | null> {
  const target = req.url ?? "";
  if (!target.startsWith("/") && !/^https?:\/\//i.test(target)) return refuse(req, res, 400, "Bad request target");
  const queryAt = target.indexOf("?");
  const pathname = target.startsWith("/") ? (queryAt === -1 ? target : target.slice(0, queryAt)) : new URL(target).pathname;
  try {
    decodeURIComponent(pathname);
  } catch {
    return refuse(req, res, 400, "Malformed path");
  }
  // No page, id or filter holds a NUL, and PostgreSQL text cannot: refused before any query sees it.
  if (/%00/.test(target)) return refuse(req, res, 400, "NUL in the request target");
  req.headers["x-forwarded-for"] = clientAddress(req, trustedProxies);
  if (!trustedProxies.has(normaliseAddress(req.socket.remoteAddress ?? ""))) {
    // Only a trusted proxy says which host and protocol the client used (next-auth builds its URLs from them).
    delete req.headers["x-forwarded-host"];
    delete req.headers["x-forwarded-proto"];
    delete req.headers["x-forwarded-port"];
  }
  const method = req.method ?? "GET";
  if (method === "GET" || method === "HEAD") return req;
  // Next refuses a server action from another origin by throwing (a 500): refused here as what it is.
  if (req.headers["next-action"] !== undefined && !isSameOrigin(req)) return refuse(req, res, 403, "Cross-origin action refused");
  const contentType = req.headers["content-type"] ?? "";
  const cap = bodyCapOf(pathname, contentType);
  if (cap === null) return refuse(req, res, 415, "Multipart bodies are accepted only by dashboard actions");
  const declared = Number(req.headers["content-length"] ?? "NaN");
  if (Number.isFinite(declared) && declared > cap) return refuse(req, res, 413, `Body over ${cap} bytes`);
  const multipart = contentType.toLowerCase().startsWith("multipart/");
  // A declared length within the cap is all Next can read; a chunked body is read here, up to the cap.
  if (!multipart && Number.isFinite(declared)) return req;
  let boundary: string | null = null;
  if (multipart) {
    if (!SESSION_COOKIE.test(req.headers.cookie ?? "")) return refuse(req, res, 401, "Sign in first");
    boundary = boundaryOf(contentType);
    if (!boundary) return refuse(req, res, 400, "Multipart body without a boundary");
  }
  const body = await readUpTo(req, cap);
  if (body === null) return refuse(req, res, 413, `Body over ${cap} bytes`);
  if (boundary && countParts(body, boundary, MAX_MULTIPART_PARTS) > MAX_MULTIPART_PARTS) return refuse(req, res, 413, `More than ${MAX_MULTIPART_PARTS} parts`);
  return replayed(req, body);
}
