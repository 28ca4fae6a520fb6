import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { schemaSource } from "./generate-schema";

const here = import.meta.dirname;
const root = path.resolve(here, "..", "..");

describe("the SDK package", () => {
  it("has the types of the committed OpenAPI document (npm run openapi writes both)", async () => {
    const document = JSON.parse(fs.readFileSync(path.join(root, "docs", "openapi.json"), "utf8")) as object;
    expect(fs.readFileSync(path.join(here, "src", "schema.ts"), "utf8")).toBe(await schemaSource(document));
  });

  it("imports no server code: only its own files and its declared dependencies", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const sources = fs.readdirSync(path.join(here, "src")).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    expect(sources).toContain("index.ts");
    for (const file of sources) {
      const text = fs.readFileSync(path.join(here, "src", file), "utf8");
      for (const [, spec] of text.matchAll(/(?:^|\n)\s*(?:import|export)[^"']*?from\s+["']([^"']+)["']/g)) {
        expect(spec.startsWith("./") || spec in manifest.dependencies, `${file} imports ${spec}`).toBe(true);
      }
    }
  });

  it("declares the versions the service is built and tested with", () => {
    const sdk = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const service = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    for (const [name, range] of Object.entries(sdk.dependencies)) expect(service.dependencies[name], name).toBe(range);
  });
});
