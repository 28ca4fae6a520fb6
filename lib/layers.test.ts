import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// Every import arrow points down (docs/architecture.md, "Layers"): a product file imports its own
// layer or a lower one, never a higher one, and never the lab. Read from the sources with a regex:
// `from "…"` (imports and re-exports) and `import("…")`, for specifiers that name a file of this
// repository (`@/…` or relative). Tests may import anything; the lab (research tooling) is not checked.

/** Highest first. A folder (or file, without extension) belongs to the longest entry it starts with. */
const LAYERS: { name: string; areas: string[] }[] = [
  { name: "pages", areas: ["app", "components", "instrumentation", "proxy"] },
  { name: "fronts", areas: ["lib/api", "lib/http", "lib/dashboard", "lib/server", "lib/ops"] },
  { name: "features", areas: ["lib/pets", "lib/capture-sessions", "lib/uploads", "lib/jobs", "lib/galleries", "lib/webhooks"] },
  { name: "platform", areas: ["lib/storage", "lib/accounts", "lib/auth", "lib/rate-limit", "lib/domain-errors", "lib/json-text", "lib/engine-figures", "lib/engine"] },
  { name: "database and process", areas: ["lib/db", "lib/generated", "lib/env", "lib/log", "lib/mail", "lib/metrics", "lib/process-state", "lib/progress", "lib/private-files", "lib/secret-file"] },
  { name: "engine", areas: ["lib/biometrics"] },
];
/** The lab (generator, benches, evaluation, test support, research scripts) and the entry scripts. The product imports none of it. */
const LAB = ["lab", "scripts"];
/** Product files that import the lab, each with its reason. */
const LAB_IMPORTS_LEFT = [
  "lib/ops/demo.ts -> lab/synth/dataset", // `ops demo` makes the demo account's nose photos with the generator
];

const SOURCE_ROOTS = ["app", "components", "lib", "instrumentation.ts", "proxy.ts"];
const SPECIFIER = /\bfrom\s+["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

function sourceFiles(entry: string): string[] {
  const stat = fs.statSync(entry);
  if (stat.isFile()) return /\.tsx?$/.test(entry) ? [entry] : [];
  if (entry === "lib/generated") return [];
  return fs.readdirSync(entry).flatMap((name) => sourceFiles(path.posix.join(entry, name)));
}

function withoutExtension(file: string): string {
  return file.replace(/\.(tsx?|json|mjs)$/, "");
}

function areaOf(file: string): { area: string; lab: boolean; rank: number } | undefined {
  const bare = withoutExtension(file);
  const starts = (area: string) => bare === area || bare.startsWith(`${area}/`);
  let best: { area: string; lab: boolean; rank: number } | undefined;
  LAYERS.forEach((layer, rank) => {
    for (const area of layer.areas) if (starts(area) && (!best || area.length > best.area.length)) best = { area, lab: false, rank };
  });
  for (const area of LAB) if (starts(area) && (!best || area.length > best.area.length)) best = { area, lab: true, rank: -1 };
  return best;
}

interface Arrow {
  from: string;
  to: string;
}

function productArrows(): Arrow[] {
  const arrows: Arrow[] = [];
  for (const file of SOURCE_ROOTS.flatMap(sourceFiles)) {
    if (/\.test\.tsx?$/.test(file) || areaOf(file)?.lab) continue;
    for (const match of fs.readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2];
      const target = specifier.startsWith("@/") ? specifier.slice(2) : specifier.startsWith(".") ? path.posix.join(path.posix.dirname(file), specifier) : null;
      if (target) arrows.push({ from: file, to: withoutExtension(target) });
    }
  }
  return arrows;
}

describe("import direction", () => {
  const arrows = productArrows();

  it("reads the product's imports", () => {
    expect(arrows.length).toBeGreaterThan(500);
    expect(arrows).toContainEqual({ from: "lib/api/v2.ts", to: "lib/api/endpoints/pets" });
  });

  it("places every product file in a layer", () => {
    const unplaced = [...new Set(arrows.flatMap((a) => [a.from, a.to]).filter((file) => !areaOf(file)))];
    expect(unplaced).toEqual([]);
  });

  it("never imports a higher layer (features never import lib/api; lib/db never imports a feature)", () => {
    const upward = arrows
      .filter((a) => {
        const [from, to] = [areaOf(a.from), areaOf(a.to)];
        return from && to && !to.lab && to.rank < from.rank;
      })
      .map((a) => `${a.from} (${LAYERS[areaOf(a.from)!.rank].name}) -> ${a.to} (${LAYERS[areaOf(a.to)!.rank].name})`);
    expect(upward).toEqual([]);
  });

  it("never imports the lab, but for the imports listed with their reason", () => {
    const intoLab = arrows.filter((a) => areaOf(a.to)?.lab).map((a) => `${a.from} -> ${a.to}`);
    expect(intoLab.sort()).toEqual([...LAB_IMPORTS_LEFT].sort());
  });

  it("reaches the engine through its door (lib/engine) only", () => {
    const around = arrows
      .filter((a) => areaOf(a.to)?.area === "lib/biometrics" && !["lib/biometrics", "lib/engine"].includes(areaOf(a.from)!.area))
      .map((a) => `${a.from} -> ${a.to}`);
    expect(around).toEqual([]);
    expect(arrows).toContainEqual({ from: "lib/engine/index.ts", to: "lib/biometrics" });
  });
});

describe("tests, split by what they are", () => {
  const testFiles = (dir: string): string[] =>
    fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map((f) => path.posix.join(dir, String(f))).filter((f) => /\.test\.tsx?$/.test(f)) : [];
  const bootsServer = (file: string) => /\b(buildOnce|startServer)\(/.test(fs.readFileSync(file, "utf8"));

  it("keeps every suite that builds the app and boots servers in tests/server/ (vitest project \"server\"), and nothing else there", () => {
    const elsewhere = ["app", "components", "lib", "scripts", "packages", "lab"].flatMap(testFiles).filter((f) => !f.includes("/node_modules/") && bootsServer(f));
    expect(elsewhere).toEqual([]);
    const server = testFiles("tests/server");
    expect(server.length).toBeGreaterThan(5);
    expect(server.filter((f) => !bootsServer(f))).toEqual([]);
  });
});
