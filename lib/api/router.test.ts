import { describe, expect, it } from "vitest";
import type { Endpoint } from "./endpoint";
import { createRouter } from "./router";

const endpoint = (method: Endpoint["method"], path: string) => ({ method, path }) as Endpoint;
const endpoints = [
  endpoint("GET", "/v2/pets"),
  endpoint("GET", "/v2/pets/{petId}"),
  endpoint("POST", "/v2/pets/{petId}:verify"),
  endpoint("POST", "/v2/pets:identify"),
  endpoint("POST", "/v2/fingerprints:upload"),
];
const router = createRouter(endpoints);

describe("router", () => {
  it("matches templates with a verb glued to the last segment", () => {
    expect(router.match("POST", "/v2/pets/abc:verify")).toEqual({ endpoint: endpoints[2], route: "POST /v2/pets/{petId}:verify", params: { petId: "abc" } });
    expect(router.match("POST", "/v2/pets:identify")?.endpoint).toBe(endpoints[3]);
    expect(router.match("POST", "/v2/fingerprints:upload")?.endpoint).toBe(endpoints[4]);
  });

  it("keeps the verb out of path parameters", () => {
    expect(router.match("GET", "/v2/pets/abc:verify")).toBeNull();
    expect(router.match("GET", "/v2/pets/abc")).toEqual({ endpoint: endpoints[1], route: "GET /v2/pets/{petId}", params: { petId: "abc" } });
  });

  it("decodes parameters and refuses other methods, extra segments and unknown verbs", () => {
    expect(router.match("GET", "/v2/pets/a%20b")?.params).toEqual({ petId: "a b" });
    expect(router.match("GET", "/v2/pets/%E0")?.params).toEqual({ petId: "%E0" });
    expect(router.match("DELETE", "/v2/pets")).toBeNull();
    expect(router.match("GET", "/v2/pets/a/b")).toBeNull();
    expect(router.match("POST", "/v2/pets/abc:explode")).toBeNull();
  });
});
