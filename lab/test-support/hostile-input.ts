import http from "node:http";
import fc from "fast-check";
import sharp from "sharp";
import { ERROR_CODES } from "@/lib/api/error-codes";
import { noseCapture } from "./nose-images";

// Hostile requests for the property test (tests/server/hostile-input.test.ts) and the long run
// (`npm run hostile`): malformed JSON and multipart bodies, wrong types, missing and extra fields,
// huge and deeply nested JSON, invalid UTF-8, wrong content types, path tricks, truncated and
// oversized bodies, and images that are not what they claim to be. The routes come from the served
// OpenAPI document, so a new endpoint is attacked without a change here.

export interface Route {
  method: string;
  /** Contract template, e.g. "/v2/pets/{petId}:verify". */
  path: string;
  body: "json" | "multipart" | null;
}

export interface HostileRequest {
  label: string;
  method: string;
  /** Raw request target: may hold bad escapes, raw high bytes, "..", very long segments. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  ms: number;
}

/** Real ids of the attacking account, so that requests reach the handlers and not only the 404s. */
export interface Targets {
  apiKey: string;
  petId: string;
  /** A live registration session of petId: uploads into it run the real engine. */
  sessionId: string;
  jobId: string;
}

export async function routesFromOpenApi(baseUrl: string): Promise<Route[]> {
  const doc = (await (await fetch(`${baseUrl}/v2/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
  };
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const content = op.requestBody?.content ?? {};
      const body = "multipart/form-data" in content ? "multipart" : "application/json" in content ? "json" : null;
      routes.push({ method: method.toUpperCase(), path: path.startsWith("/v2") ? path : `/v2${path}`, body });
    }
  }
  return routes;
}

// ---------------------------------------------------------------- images

export type HostileImages = Record<string, Buffer>;

/** Replaces the width and height in the first SOF marker: a small file that claims to be huge. */
function withClaimedSize(jpeg: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(jpeg);
  for (let i = 2; i < out.length - 9; i++) {
    if (out[i] === 0xff && out[i + 1] >= 0xc0 && out[i + 1] <= 0xc2) {
      out.writeUInt16BE(height, i + 5);
      out.writeUInt16BE(width, i + 7);
      return out;
    }
  }
  throw new Error("no SOF marker");
}

/** JPEG files that lie, break or exhaust: each must be refused as 10001 (or accepted if it is fine). */
export async function hostileImages(): Promise<HostileImages> {
  const nose = await noseCapture(7, 0);
  const tiny = await sharp({ create: { width: 1, height: 1, channels: 3, background: "#808080" } }).jpeg().toBuffer();
  // A real decompression bomb: 12,000 x 12,000 (144 MP) of one colour, a few hundred KB on the wire.
  const bomb = await sharp({ create: { width: 12_000, height: 12_000, channels: 3, background: "#7f7f7f" }, limitInputPixels: false })
    .jpeg({ quality: 10 })
    .toBuffer();
  const corrupt = Buffer.from(nose);
  for (let i = 200; i < corrupt.length; i += 97) corrupt[i] = 0xff; // stray marker bytes all through the scan
  return {
    zeroSize: Buffer.alloc(0),
    oneByOne: tiny,
    cmyk: await sharp(nose).toColourspace("cmyk").jpeg().toBuffer(),
    progressive: await sharp(nose).jpeg({ progressive: true }).toBuffer(),
    rotatedExif: await sharp(nose).withMetadata({ orientation: 6 }).jpeg().toBuffer(),
    truncatedHalf: nose.subarray(0, nose.length >> 1),
    truncatedHeader: nose.subarray(0, 40),
    corruptMarkers: corrupt,
    claimsHuge: withClaimedSize(nose, 65_000, 65_000),
    claimsZero: withClaimedSize(nose, 0, 0),
    bomb,
    soiOnly: Buffer.from([0xff, 0xd8, 0xff]),
    soiGarbage: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(4000, 0xab)]),
    png: await sharp(nose).png().toBuffer(),
    gif: Buffer.from("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;", "latin1"),
    text: Buffer.from("this is not an image\n"),
    html: Buffer.from("<html><script>alert(1)</script></html>"),
    wellFormed: nose,
  };
}

// ---------------------------------------------------------------- generators

const METHODS = ["GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"];

/** Path segment values: real ids, empty-ish, traversal, bad escapes, raw bytes, NUL, enormous. */
const segmentArb = (t: Targets): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(t.petId, t.sessionId, t.jobId, "x", "..", "%2e%2e", "..%2f..%2fetc%2fpasswd", "%00", "%", "%E0%A4%A", "%ff%fe", "%C0%AF"),
    fc.constantFrom(";", "%3B", "a:b", "%3A", "~", "'", "%27%20OR%201=1--", "${jndi}", "\u00e9", "\u00ff\u00fe"),
    fc.string({ maxLength: 40 }).map((s) => encodeURIComponent(s)),
    fc.string({ unit: "binary", maxLength: 20 }).map((s) => encodeURIComponent(s)),
    fc.integer({ min: 1000, max: 9000 }).map((n) => "a".repeat(n)),
  );

function fillTemplate(path: string, values: string[]): string {
  let i = 0;
  return path.replace(/\{[A-Za-z]+\}/g, () => values[i++ % values.length]);
}

/** JSON values of every shape (wrong types, arrays, nulls, numbers where strings belong). */
const jsonValueArb = fc.jsonValue({ maxDepth: 3 });

/** A body built from the valid fields of the API with each one maybe dropped, mistyped or swapped. */
const fieldsArb = (t: Targets) =>
  fc.record(
    {
      species: fc.oneof(fc.constantFrom("DOG", "CAT", "dog", "FISH", "", "DOG\u0000"), jsonValueArb),
      purpose: fc.oneof(fc.constantFrom("PET_PROFILE_REGISTRATION", "PET_VERIFICATION", "PET_IDENTIFICATION", "pet_verification"), jsonValueArb),
      petId: fc.oneof(fc.constantFrom(t.petId, "", "nope", "\u0000"), jsonValueArb),
      sessionId: fc.oneof(fc.constantFrom(t.sessionId, "", "nope", "\u0000", "%00"), jsonValueArb),
      breed: fc.oneof(fc.string({ maxLength: 300 }), jsonValueArb),
      metadata: fc.oneof(
        fc.constantFrom("{}", "{", "null", '"\\u0000"', "[1,2]", '{"a":"\u0000"}'),
        fc.integer({ min: 16_000, max: 17_000 }).map((n) => JSON.stringify({ pad: "x".repeat(n) })),
        jsonValueArb,
      ),
      extra: jsonValueArb,
    },
    { requiredKeys: [] },
  );

function deepNesting(depth: number, open: string, close: string): string {
  return open.repeat(depth) + close.repeat(depth);
}

/** JSON body bytes: mostly almost-right objects, some not JSON at all. */
const jsonBodyArb = (t: Targets): fc.Arbitrary<{ label: string; bytes: Buffer }> =>
  fc.oneof(
    { weight: 6, arbitrary: fieldsArb(t).map((o) => ({ label: "fields", bytes: Buffer.from(JSON.stringify(o)) })) },
    { weight: 2, arbitrary: jsonValueArb.map((v) => ({ label: "any-json", bytes: Buffer.from(JSON.stringify(v) ?? "null") })) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 30_000 }).map((d) => ({ label: `nested-array-${d}`, bytes: Buffer.from(deepNesting(d, "[", "]")) })) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 10_000 }).map((d) => ({ label: `nested-object-${d}`, bytes: Buffer.from(deepNesting(d, '{"a":', "}").replace(/\{"a":\}/, "{}")) })),
    },
    { weight: 1, arbitrary: fc.integer({ min: 65 * 1024, max: 200 * 1024 }).map((n) => ({ label: `huge-${n}`, bytes: Buffer.from(JSON.stringify({ species: "DOG", metadata: "x".repeat(n) })) })) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => ({ label: "random-bytes", bytes: Buffer.from(b) })) },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => ({
        label: "invalid-utf8",
        bytes: Buffer.concat([Buffer.from('{"species":"DOG","metadata":"'), Buffer.from(b.map((x) => x | 0x80)), Buffer.from('"}')]),
      })),
    },
    { weight: 1, arbitrary: fc.constantFrom("", "{", '{"species":', "nul\u0000l", "\ufeff{}", "[]", "null", "1e999999", '{"__proto__":{"species":"DOG"},"constructor":{"prototype":{"x":1}}}').map((s) => ({ label: `text:${s.slice(0, 12)}`, bytes: Buffer.from(s) })) },
  );

const BOUNDARY = "----rhinariumHostile7MA4YWxkTrZu0gW";

function multipart(parts: { name: string; filename?: string; type?: string; data: Buffer }[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ""}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ""}\r\n`));
    chunks.push(p.data, Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** Multipart bodies: hostile images in the right field, the right image in the wrong shape, broken framing. */
const multipartBodyArb = (images: HostileImages): fc.Arbitrary<{ label: string; contentType: string; bytes: Buffer }> => {
  const names = Object.keys(images);
  const ok = `multipart/form-data; boundary=${BOUNDARY}`;
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .record({ image: fc.constantFrom(...names), type: fc.constantFrom("image/jpeg", "image/png", "text/plain", undefined), filename: fc.constantFrom("x.jpg", "../../etc/passwd", "a\u0000.jpg", "") })
        .map((r) => ({ label: `image:${r.image}`, contentType: ok, bytes: multipart([{ name: "file", filename: r.filename, type: r.type, data: images[r.image] }]) })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...names).map((name) => ({
        label: `wrong-shape:${name}`,
        contentType: ok,
        bytes: multipart([
          { name: "picture", filename: "x.jpg", data: images[name] },
          { name: "file", data: Buffer.from("a string, not a file") },
        ]),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...names).map((name) => ({
        label: `two-files:${name}`,
        contentType: ok,
        bytes: multipart([
          { name: "file", filename: "a.jpg", data: images[name] },
          { name: "file", filename: "b.jpg", data: images.wellFormed },
        ]),
      })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...names), fc.double({ min: 0, max: 1, noNaN: true })).map(([name, cut]) => {
        const full = multipart([{ name: "file", filename: "x.jpg", data: images[name] }]);
        return { label: `truncated-multipart:${name}`, contentType: ok, bytes: full.subarray(0, Math.floor(full.length * cut)) };
      }),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "multipart/form-data",
        "multipart/form-data; boundary=",
        "multipart/form-data; boundary=other",
        "application/json",
        "text/plain",
        "image/jpeg",
        "application/x-www-form-urlencoded",
      ).map((contentType) => ({ label: `content-type:${contentType}`, contentType, bytes: multipart([{ name: "file", filename: "x.jpg", data: images.wellFormed }]) })),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2000 }).map((b) => ({ label: "random-multipart", contentType: ok, bytes: Buffer.from(b) })) },
  );
};

export interface HostileMix {
  /** Relative weight of uploads larger than the 10 MiB cap (slow: keep it low in the fast test). */
  oversizedWeight: number;
}

/** One hostile request against one of the routes. */
export function hostileRequestArb(routes: Route[], t: Targets, images: HostileImages, mix: HostileMix): fc.Arbitrary<HostileRequest> {
  const key = { "x-service-api-key": t.apiKey };
  const realIds = [t.petId, t.sessionId, t.jobId];
  const routeArb = fc.constantFrom(...routes);
  // A DELETE with the real pet id would end the run's coverage of that pet after one request.
  const realPath = (r: Route) => fillTemplate(r.path, r.method === "DELETE" ? ["no-such-pet"] : realIds) + (r.body === "multipart" ? `?sessionId=${t.sessionId}` : "");

  const jsonOnRoute = fc.tuple(routeArb, jsonBodyArb(t), fc.constantFrom("application/json", "application/json; charset=latin1", "text/plain", "", "application/xml")).map(
    ([r, b, type]): HostileRequest => ({
      label: `json ${r.method} ${r.path} ${b.label} ${type}`,
      method: r.method,
      target: realPath(r),
      headers: { ...key, ...(type ? { "content-type": type } : {}) },
      body: b.bytes,
    }),
  );
  const multipartRoutes = routes.filter((r) => r.body === "multipart");
  const multipartOnRoute = fc.tuple(fc.constantFrom(...(multipartRoutes.length ? multipartRoutes : routes)), multipartBodyArb(images), fc.constantFrom(t.sessionId, "nope", "", "%00")).map(
    ([r, b, sessionId]): HostileRequest => ({
      label: `multipart ${r.path} ${b.label} session=${sessionId === t.sessionId ? "live" : sessionId}`,
      method: r.method,
      target: `${r.path}?sessionId=${sessionId}`,
      headers: { ...key, "content-type": b.contentType },
      body: b.bytes,
    }),
  );
  const pathTricks = fc.tuple(routeArb, fc.array(segmentArb(t), { minLength: 1, maxLength: 3 }), fc.constantFrom(...METHODS), fc.constantFrom("", "?sessionId=", "?sessionId=%ff", "?sessionId=%00", "?a=1&a=2&sessionId=x&sessionId=y", `?${"q=1&".repeat(500)}`)).map(
    ([r, values, method, query]): HostileRequest => ({ label: `path ${method} ${r.path}`, method, target: fillTemplate(r.path, values) + query, headers: key }),
  );
  const keyTricks = fc.tuple(routeArb, fc.constantFrom("", "rk_", "x".repeat(5000), `${t.apiKey} `, t.apiKey.toUpperCase(), `${t.apiKey}\u00e9`, "rk_\u00ff\u00fe")).map(
    ([r, k]): HostileRequest => ({ label: `key ${r.method} ${r.path}`, method: r.method, target: realPath(r), headers: k === "" ? {} : { "x-service-api-key": k } }),
  );
  const oversized = fc.tuple(fc.constantFrom(...(multipartRoutes.length ? multipartRoutes : routes)), fc.integer({ min: 10 * 1024 * 1024 + 1, max: 12 * 1024 * 1024 })).map(
    ([r, size]): HostileRequest => ({
      label: `oversized ${r.path} ${size}`,
      method: r.method,
      target: `${r.path}?sessionId=${t.sessionId}`,
      headers: { ...key, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body: multipart([{ name: "file", filename: "big.jpg", type: "image/jpeg", data: Buffer.concat([images.wellFormed, Buffer.alloc(size - images.wellFormed.length)]) }]),
    }),
  );
  const arbs: { weight: number; arbitrary: fc.Arbitrary<HostileRequest> }[] = [
    { weight: 8, arbitrary: jsonOnRoute },
    { weight: 8, arbitrary: multipartOnRoute },
    { weight: 5, arbitrary: pathTricks },
    { weight: 2, arbitrary: keyTricks },
  ];
  if (mix.oversizedWeight > 0) arbs.push({ weight: mix.oversizedWeight, arbitrary: oversized });
  return fc.oneof(...arbs);
}

// ---------------------------------------------------------------- sending and judging

/**
 * Sends bytes as they are (no client-side escaping or validation) and waits at most `timeoutMs`.
 * A connection the server closes after answering early (an oversized body cut off) still counts
 * as that answer.
 */
export function sendRaw(baseUrl: string, req: HostileRequest, timeoutMs: number): Promise<Answer> {
  const url = new URL(baseUrl);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { connection: "close", ...req.headers };
    if (req.body) headers["content-length"] = req.body.length;
    let r: http.ClientRequest;
    try {
      r = http.request({ host: url.hostname, port: url.port, method: req.method, path: req.target, headers, insecureHTTPParser: false });
    } catch (error) {
      // Node refuses to send some targets or header values at all (bytes above U+00FF, control
      // characters): such a request never reaches a server, so there is nothing to judge.
      reject(Object.assign(new Error(`unsendable: ${(error as Error).message}`), { unsendable: true }));
      return;
    }
    const timer = setTimeout(() => {
      r.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms (hang)`));
    }, timeoutMs);
    r.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      const done = () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8"), ms: performance.now() - started });
      };
      res.on("end", done);
      res.on("error", done);
    });
    r.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // A write error after the server answered and closed is expected for cut-off bodies.
    if (req.body) r.end(req.body);
    else r.end();
  });
}

const CODE_STATUS = new Map(Object.values(ERROR_CODES).map((e) => [`SERVICEB2B${e.digits}`, e.status as number]));

/**
 * The verdict on one answer: null when it is acceptable, else what is wrong. Acceptable: a 4xx in
 * the documented error shape with a code of the table and that code's status; a success envelope
 * (a malformed-looking request can still be valid, e.g. an ignored extra field); Next's 308 to the
 * normalised path for an empty segment or a trailing slash; Node's bare 400 for a request that is
 * not HTTP at all. Never a 5xx.
 */
export function judge(req: HostileRequest, answer: Answer): string | null {
  const { status } = answer;
  // Bytes outside printable ASCII in the request line or a header are not HTTP/1.1: Node's parser
  // refuses them with a bare 400 and closes the connection before any application code runs.
  const notHttp = /[^\x21-\x7e]/.test(req.target) || Object.values(req.headers).some((v) => /[^\x20-\x7e]/.test(v));
  if (notHttp && status === 400 && answer.text === "") return null;
  if (status >= 500) return `${status} server error: ${answer.text.slice(0, 300)}`;
  if (status >= 300 && status < 400) {
    const path = req.target.split("?")[0].replace(/%2e/gi, ".");
    const normalisable = /\/\//.test(path) || path.endsWith("/") || /(^|\/)\.\.?(\/|$)/.test(path);
    return status === 308 && normalisable && answer.headers.location ? null : `unexpected ${status} redirect`;
  }
  if (req.method === "HEAD") return status >= 400 || status < 300 ? null : `HEAD answered ${status}`;
  if (status === 204) return answer.text === "" ? null : "204 with a body";
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `${status} with a body that is not JSON: ${answer.text.slice(0, 200)}`;
  }
  if (status >= 200 && status < 300) {
    return (body as { success?: unknown }).success === true && "data" in (body as object) ? null : `${status} without the success envelope`;
  }
  if (status < 400) return `unexpected status ${status}`;
  const errors = (body as { errors?: unknown }).errors;
  if (!Array.isArray(errors) || errors.length !== 1) return `${status} without the error shape: ${answer.text.slice(0, 200)}`;
  const [error] = errors as { code?: unknown; details?: unknown }[];
  const keys = Object.keys(error as object).sort().join(",");
  if (keys !== "code" && keys !== "code,details") return `error item with fields ${keys}`;
  const expected = typeof error.code === "string" ? CODE_STATUS.get(error.code) : undefined;
  if (expected === undefined) return `unknown code ${String(error.code)}`;
  if (expected !== status) return `${error.code} answered with ${status}, the table says ${expected}`;
  if (error.details !== undefined) {
    const ok = typeof error.details === "object" && error.details !== null && Object.values(error.details).every((v) => Array.isArray(v) && v.every((m) => typeof m === "string"));
    if (!ok) return "details is not a map of field to messages";
  }
  return null;
}

/** Resident memory of a process, in MB (Linux). */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}
