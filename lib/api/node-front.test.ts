import { describe, expect, it } from "vitest";
import { claimsApiRequest } from "./node-front";

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
});
