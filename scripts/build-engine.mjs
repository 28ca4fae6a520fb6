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

// A module opened the same way (a worker thread's entry) is no data file: it is not copied.
const DATA_FILE = /new URL\("(\.\/[^"]+?(?<!\.[cm]?[jt]s))", import\.meta\.url\)/g;

/**
 * esbuild with the options every compiled part of a build shares (Node 20, ES modules, packages left to
 * node_modules); the data files the bundled modules open beside themselves are copied beside the output.
 */
export async function bundle(options) {
  // Loaded here, not at the top: `npm start` and the process entries read this module when they run an existing build too.
  const { build } = await import("esbuild");
  const result = await build({
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Packages (sharp: native) load from node_modules at run time, as the server's do.
    packages: "external",
    metafile: true,
    logLevel: "warning",
    ...options,
  });
  const outDir = options.outdir ?? path.dirname(options.outfile);
  for (const input of Object.keys(result.metafile.inputs)) {
    const source = path.resolve(root, input);
    for (const [, rel] of fs.readFileSync(source, "utf8").matchAll(DATA_FILE)) {
      fs.copyFileSync(path.resolve(path.dirname(source), rel), path.join(outDir, rel));
    }
  }
  return result;
}

/** Compiles the engine's worker into `<distDir>/engine/` (replacing it); returns the worker's path. */
export async function compileEngine(distDir) {
  const outfile = path.resolve(distDir, ENGINE_WORKER);
  fs.rmSync(path.dirname(outfile), { recursive: true, force: true });
  await bundle({ entryPoints: [path.join(root, "lib", "biometrics", "worker.ts")], outfile });
  return outfile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const distDir = path.resolve(root, process.env.NEXT_DIST_DIR || ".next");
  const started = Date.now();
  const worker = await compileEngine(distDir);
  console.log(`engine worker compiled: ${path.relative(root, worker)} (${Date.now() - started} ms)`);
}
