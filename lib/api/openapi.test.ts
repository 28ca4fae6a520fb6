import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./openapi";
import { ERROR_CODES } from "./error-codes";
import { OPERATION_EXAMPLES } from "./examples";
import { v2Endpoints } from "./v2";

describe("OpenAPI document", () => {
  it("matches the committed docs/openapi.json (run `npm run openapi` after changing the contract)", () => {
    const committed = JSON.parse(fs.readFileSync("docs/openapi.json", "utf8"));
    expect(JSON.parse(JSON.stringify(buildOpenApiDocument()))).toEqual(committed);
  });

  it("describes every operation of the contract", () => {
    const doc = buildOpenApiDocument();
    const operations = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(operations.sort()).toEqual(
      [
        "POST /v2/pets",
        "GET /v2/pets",
        "GET /v2/pets/{petId}",
        "PATCH /v2/pets/{petId}",
        "DELETE /v2/pets/{petId}",
        "POST /v2/capture-sessions",
        "POST /v2/fingerprints:upload",
        "POST /v2/appearances:upload",
        "POST /v2/pets/{petId}:addFingerprints",
        "POST /v2/pets/{petId}:verify",
        "POST /v2/pets:identify",
        "GET /v2/fingerprint-addition-jobs/{jobId}",
        "GET /v2/verification-jobs/{jobId}",
        "GET /v2/identification-jobs/{jobId}",
      ].sort(),
    );
  });

  it("shows an example of every operation that its own schemas accept: the body sent, the success answer, an error", () => {
    expect(Object.keys(OPERATION_EXAMPLES).sort()).toEqual(v2Endpoints.map((e) => e.operationId).sort());
    const doc = buildOpenApiDocument() as unknown as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example?: unknown }> }; responses: Record<string, { content?: Record<string, { example?: unknown }> }> }>> };
    for (const endpoint of v2Endpoints) {
      const example = OPERATION_EXAMPLES[endpoint.operationId];
      const op = doc.paths[endpoint.path][endpoint.method.toLowerCase()];
      if (endpoint.bodyKind === "json") {
        expect(endpoint.body!.safeParse(example.body).success, endpoint.operationId).toBe(true);
        expect(op.requestBody!.content["application/json"].example).toEqual(example.body);
      }
      if (endpoint.response) {
        expect(endpoint.response.safeParse(example.data).success, endpoint.operationId).toBe(true);
        expect(op.responses[String(endpoint.successStatus)].content!["application/json"].example).toEqual({ success: true, data: example.data });
      }
      for (const [status, answer] of Object.entries(op.responses).filter(([s]) => Number(s) >= 400)) {
        expect((answer.content!["application/json"].example as { errors: { code: string }[] }).errors[0].code, `${endpoint.operationId} ${status}`).toMatch(/^SERVICEB2B\d{5}$/);
      }
    }
  });

  it("lists every error code once, with the unreachable ones explained", () => {
    const codes = buildOpenApiDocument()["x-error-codes"];
    expect(new Set(codes.map((c) => c.code)).size).toBe(Object.keys(ERROR_CODES).length);
    for (const c of codes.filter((c) => !c.reachable)) expect(c).toHaveProperty("why");
    expect(codes.filter((c) => !c.reachable).map((c) => c.code).sort()).toEqual(["SERVICEB2B20017", "SERVICEB2B30002"]);
  });
});
