import { describe, expect, it } from "vitest";
import { MAX_JSON_BODY_BYTES, MAX_UPLOAD_BYTES, readCappedBody } from "./body";
import { ApiError } from "./errors";

function chunkedRequest(totalBytes: number, chunkBytes = 256 * 1024): Request {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const size = Math.min(chunkBytes, totalBytes - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size));
    },
  });
  // No content-length: the cap must hold on the streamed bytes alone.
  return new Request("http://x/v2/pets", { method: "POST", body, duplex: "half" } as RequestInit);
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("readCappedBody", () => {
  it("reads a body within the cap", async () => {
    expect((await readCappedBody(chunkedRequest(1000), "json")).byteLength).toBe(1000);
  });

  it("stops a chunked JSON body as soon as it passes 64 KiB", async () => {
    const error = await rejection(readCappedBody(chunkedRequest(MAX_JSON_BODY_BYTES + 1, 4096), "json"));
    expect(error.errorName).toBe("ValidationError");
    expect(Object.keys(error.details!)).toEqual(["body"]);
  });

  it("stops a chunked upload past the file cap, naming the file field", async () => {
    const error = await rejection(readCappedBody(chunkedRequest(MAX_UPLOAD_BYTES + 64 * 1024), "multipart"));
    expect(Object.keys(error.details!)).toEqual(["file"]);
  });

  it("refuses a declared length over the cap without reading", async () => {
    const req = new Request("http://x", { method: "POST", body: "{}", headers: { "content-length": String(MAX_JSON_BODY_BYTES + 1) } });
    expect(Object.keys((await rejection(readCappedBody(req, "json"))).details!)).toEqual(["body"]);
  });
});
