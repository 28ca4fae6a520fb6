import { describe, expect, it } from "vitest";
import { acceptsGzip, claimsApiRequest, MIN_COMPRESSED_BYTES, shouldCompress } from "./node-front";

// Which requests the Node front answers itself and which it leaves to Next (lib/api/node-front.ts);
// the answers themselves are tested over HTTP against the real server (contract, hostile-input and
// security suites), which the front serves.

describe("the API's Node front", () => {
  it("answers /v2 operations, with any query, method-independent", () => {
    for (const target of ["/v2/pets", "/v2/pets/abc", "/v2/pets/abc:verify", "/v2/fingerprints:upload?sessionId=x", "/v2/nothing", "/v2/pets?x=/..//", "/v2/%E0%A4%A", "/v2/a%2Fb"]) {
      expect(claimsApiRequest(target), target).toBe(true);
    }
  });

  it("leaves to Next what Next answers: other paths, the OpenAPI page, and paths it normalises with 308", () => {
    for (const target of [
      "/",
      "/v2",
      "/v2x/pets",
      "/dashboard",
      "/v2/openapi.json",
      "/v2/openapi.json?x=1",
      "/v2/pets/",
      "/v2//pets",
      "/v2/./pets",
      "/v2/pets/..",
      "/v2/%2e%2E/pets",
      "/v2/pets/%2e",
      "http://host/v2/pets",
    ]) {
      expect(claimsApiRequest(target), target).toBe(false);
    }
  });

  it("gzips JSON answers of some size for clients that accept gzip, and nothing else", () => {
    for (const header of ["gzip", "gzip, deflate, br", "br;q=1, gzip;q=0.5", "*", "deflate, *;q=0.1"]) expect(acceptsGzip(header), header).toBe(true);
    for (const header of [undefined, "", "identity", "br, deflate", "gzip;q=0", "gzip;q=0.0, br", "*;q=0", "br, *;q=0.5, gzip;q=0"]) {
      expect(acceptsGzip(header), String(header)).toBe(false);
    }
    const json = new Headers({ "content-type": "application/json; charset=utf-8" });
    expect(shouldCompress(json, MIN_COMPRESSED_BYTES)).toBe(true);
    expect(shouldCompress(json, MIN_COMPRESSED_BYTES - 1)).toBe(false);
    expect(shouldCompress(new Headers({ "content-type": "image/jpeg" }), 100_000)).toBe(false);
    expect(shouldCompress(new Headers({ "content-type": "application/json", "content-encoding": "br" }), 100_000)).toBe(false);
  });
});
