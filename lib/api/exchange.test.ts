import { describe, expect, it } from "vitest";
import { errorAnswer } from "./errors";
import { headerOf, jsonAnswer, splitTarget, webResponse } from "./exchange";

describe("the wrapper's plain request and answer", () => {
  it("splits a target into the path and query that new URL would give, plain or not", () => {
    for (const target of [
      "/v2/pets/abc",
      "/v2/pets/abc:verify",
      "/v2/fingerprints:upload?sessionId=x&y=%00",
      "/v2/pets?",
      "/v2/pets/a%2Fb?q=a?b",
      "/v2/pets/%E0%A4%A",
      "/v2/pets/a b?c d",
      '/v2/pets/"x"<y>`{z}',
      "/v2/pets/\u00e9t\u00e9?n=\u00e9",
      "/v2/pets/a\\b",
      "/v2/pets/x#frag?not-a-query",
      "/v2/a/../pets",
      "/v2/a/%2e%2E/pets",
    ]) {
      const url = new URL(target, "http://localhost");
      expect(splitTarget(target), target).toEqual({ pathname: url.pathname, search: url.search.slice(1) });
    }
  });

  it("reads a repeated header as Headers.get does, and a missing one as undefined", () => {
    const req = { headers: { "x-service-api-key": ["a", "b"], "content-type": "application/json" } };
    expect(headerOf(req, "x-service-api-key")).toBe("a, b");
    expect(headerOf(req, "content-type")).toBe("application/json");
    expect(headerOf(req, "content-length")).toBeUndefined();
  });

  it("serialises JSON answers as Response.json does", async () => {
    const value = { success: true, data: { id: "p1", metadata: '{"name":"Rex"}', n: null } };
    const answer = jsonAnswer(201, value);
    const reference = Response.json(value, { status: 201 });
    expect(answer.body).toBe(await reference.text());
    expect(answer.headers).toEqual({ "content-type": reference.headers.get("content-type") });
    expect(errorAnswer("RateLimitExceededError", undefined, 3)).toEqual({
      status: 429,
      headers: { "content-type": "application/json", "retry-after": "3" },
      body: '{"errors":[{"code":"SERVICEB2B10429"}]}',
    });
  });

  it("adapts an answer to a web Response for Next, status, headers and body", async () => {
    const response = webResponse(errorAnswer("ValidationError", { path: ["bad"] }));
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({ errors: [{ code: "SERVICEB2B10001", details: { path: ["bad"] } }] });
  });
});
