import { describe, expect, it } from "vitest";
import { MAX_JSON_BODY_BYTES, MAX_UPLOAD_BYTES, readCappedBody } from "./body";
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
