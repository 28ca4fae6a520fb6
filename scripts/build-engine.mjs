#!/usr/bin/env node
// The engine's worker threads run a compiled bundle made at build time: `npm run build` (and the builds of
// `npm start`) compile lib/biometrics/worker.ts with esbuild into <dist dir>/engine/, beside the Next build
// it belongs to, so a build's server never compiles TypeScript (lib/biometrics/engine-pool.ts,
// workerEntryPath). The data files the engine opens beside its modules (`new URL("./x.bin",
// import.meta.url)`) are copied next to the bundle.
// Usage: node scripts/build-engine.mjs   (into $NEXT_DIST_DIR, default .next)
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

/** The compiled engine worker, relative to the dist dir of the build it belongs to. */
export const ENGINE_WORKER = path.join("engine", "worker.mjs");

const DATA_FILE = /new URL\("(\.\/[^"]+)", import\.meta\.url\)/g;

/** Compiles the engine's worker into `<distDir>/engine/` (replacing it); returns the worker's path. */
export async function compileEngine(distDir) {
  // Loaded here, not at the top: `npm start` reads this module when it serves an existing build too.
  const { build } = await import("esbuild");
  const outfile = path.resolve(distDir, ENGINE_WORKER);
  const outDir = path.dirname(outfile);
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await build({
    entryPoints: [path.join(root, "lib", "biometrics", "worker.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Packages (sharp: native) load from node_modules at run time, as the server's do.
    packages: "external",
    metafile: true,
    logLevel: "warning",
  });
  // Each data file a bundled module opens beside itself goes beside the bundle.
  for (const input of Object.keys(result.metafile.inputs)) {
    const source = path.resolve(root, input);
    for (const [, rel] of fs.readFileSync(source, "utf8").matchAll(DATA_FILE)) {
      fs.copyFileSync(path.resolve(path.dirname(source), rel), path.join(outDir, rel));
    }
  }
  return outfile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const distDir = path.resolve(root, process.env.NEXT_DIST_DIR || ".next");
  const started = Date.now();
  const worker = await compileEngine(distDir);
  console.log(`engine worker compiled: ${path.relative(root, worker)} (${Date.now() - started} ms)`);
}
