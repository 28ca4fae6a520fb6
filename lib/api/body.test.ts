import { describe, expect, it } from "vitest";
import { MAX_UPLOAD_BYTES } from "@/lib/uploads/limits";
import { MAX_JSON_BODY_BYTES, MULTIPART_LIMITS, parseJsonBody, parseMultipartBody, readCappedBody } from "./body";
import { ApiError } from "./errors";
import type { ApiRequest } from "./exchange";

// The cap as the wrapper applies it; how the Node front reads a body up to the cap is tested over
// HTTP in node-front.test.ts.

/** A request whose body is `totalBytes` long (no content-length unless given), recording the limits it was read with. */
function requestOf(totalBytes: number | "aborted", headers: Record<string, string> = {}): ApiRequest & { limits: number[] } {
  const limits: number[] = [];
  return {
    method: "POST",
    target: "/v2/pets",
    headers,
    limits,
    async readBody(limit) {
      limits.push(limit);
      if (totalBytes === "aborted") throw new Error("request body aborted");
      return totalBytes > limit ? null : new Uint8Array(totalBytes);
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("readCappedBody", () => {
  it("reads a body within the cap, asking for no more than the cap", async () => {
    const req = requestOf(1000);
    expect((await readCappedBody(req, "json")).byteLength).toBe(1000);
    expect(req.limits).toEqual([MAX_JSON_BODY_BYTES]);
  });

  it("refuses a JSON body past 64 KiB, naming the body", async () => {
    const error = await rejection(readCappedBody(requestOf(MAX_JSON_BODY_BYTES + 1), "json"));
    expect(error.errorName).toBe("ValidationError");
    expect(error.details).toEqual({ body: [`must be at most ${MAX_JSON_BODY_BYTES} bytes`] });
  });

  it("refuses an upload past the file cap, naming the file field and the file's cap", async () => {
    const req = requestOf(MAX_UPLOAD_BYTES + 64 * 1024);
    const error = await rejection(readCappedBody(req, "multipart"));
    expect(error.details).toEqual({ file: [`must be at most ${MAX_UPLOAD_BYTES} bytes`] });
    expect(req.limits[0]).toBeGreaterThan(MAX_UPLOAD_BYTES);
  });

  it("refuses a declared length over the cap without reading", async () => {
    const req = requestOf(2, { "content-length": String(MAX_JSON_BODY_BYTES + 1) });
    expect(Object.keys((await rejection(readCappedBody(req, "json"))).details!)).toEqual(["body"]);
    expect(req.limits).toEqual([]);
  });

  it("answers a body cut short by the client as a validation error", async () => {
    const error = await rejection(readCappedBody(requestOf("aborted"), "json"));
    expect(error.details).toEqual({ body: ["the request body ended before its declared length"] });
  });
});

const BOUNDARY = "----rhinarium-test";
const multipartHeaders = { "content-type": `multipart/form-data; boundary=${BOUNDARY}` };

/** A multipart body of these parts: [name, filename or null, content]. */
function multipart(parts: [string, string | null, string | Buffer][]): Uint8Array {
  const pieces: Buffer[] = [];
  for (const [name, filename, content] of parts) {
    const disposition = filename === null ? `form-data; name="${name}"` : `form-data; name="${name}"; filename="${filename}"`;
    pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`), Buffer.from(content), Buffer.from("\r\n"));
  }
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(pieces);
}

describe("parseMultipartBody", () => {
  const req = { ...requestOf(0), headers: multipartHeaders };

  it("gives the file with its bytes", async () => {
    const entries = await parseMultipartBody(req, multipart([["file", "x.jpg", Buffer.from([0xff, 0xd8, 0xff, 1, 2])]]));
    const file = entries.file as File;
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(new Uint8Array([0xff, 0xd8, 0xff, 1, 2]));
  });

  it("refuses a body of many tiny parts at the first part too many, in milliseconds (168,000 parts took seconds)", async () => {
    const parts = Array.from({ length: 168_000 }, (_, i) => [`f${i}`, "a", "x"] as [string, string, string]);
    const body = multipart(parts);
    expect(body.byteLength).toBeGreaterThan(10_000_000);
    const started = performance.now();
    const error = await rejection(parseMultipartBody(req, body));
    const elapsed = performance.now() - started;
    expect(error.details).toEqual({ file: [`must hold one file and at most ${MULTIPART_LIMITS.parts} parts`] });
    expect(elapsed).toBeLessThan(50);
  });

  it("refuses two files", async () => {
    const error = await rejection(parseMultipartBody(req, multipart([["file", "a.jpg", "1"], ["file2", "b.jpg", "2"]])));
    expect(error.errorName).toBe("ValidationError");
  });
});

describe("parseJsonBody", () => {
  it("refuses invalid UTF-8 instead of storing U+FFFD", () => {
    const bytes = Buffer.concat([Buffer.from('{"metadata":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(() => parseJsonBody(bytes)).toThrow(ApiError);
    expect(parseJsonBody(Buffer.from('{"a":"é"}'))).toEqual({ a: "é" });
  });
});
