import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./openapi";
import { ERROR_CODES } from "./error-codes";

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

  it("lists every error code once, with the unreachable ones explained", () => {
    const codes = buildOpenApiDocument()["x-error-codes"];
    expect(new Set(codes.map((c) => c.code)).size).toBe(Object.keys(ERROR_CODES).length);
    for (const c of codes.filter((c) => !c.reachable)) expect(c).toHaveProperty("why");
    expect(codes.filter((c) => !c.reachable).map((c) => c.code).sort()).toEqual(["SERVICEB2B20017", "SERVICEB2B30002"]);
  });
});
