#!/usr/bin/env node
// The processes beside the web server run compiled code, as the web server does: the job worker
// (lib/jobs/worker-process.ts), the operator CLI (lib/ops/cli.ts) and the migration command
// (lib/db/db-cli.ts) are compiled with esbuild, with the engine's worker beside them, into a slot of
// PROCESS_BUILD (dist/a, dist/b) under the rules of scripts/build-slots.mjs: stamped with a hash of
// what they read, never rebuilt under a running process. scripts/worker.mjs, ops.mjs and db.mjs run
// the build of the current sources and compile it first when there is none (under a second: no next
// build); `npm run build` compiles it too, so a deployed image runs it with no compiler installed.
// Usage: node scripts/build-processes.mjs [--check]
//   --check: compile nothing; exit 1 unless a finished build of the current sources exists.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { bundle, compileEngine, ENGINE_WORKER } from "./build-engine.mjs";
import { ensureBuild, planStart, sourceHash } from "./build-slots.mjs";

const root = path.resolve(import.meta.dirname, "..");

/** Each process entry: the module it runs, compiled to `<slot>/<name>.mjs`. */
const ENTRIES = { worker: "lib/jobs/worker-process.ts", ops: "lib/ops/cli.ts", db: "lib/db/db-cli.ts" };

/** The kind of build (scripts/build-slots.mjs) the process entries run from. */
export const PROCESS_BUILD = {
  slots: ["dist/a", "dist/b"],
  lock: "dist/build.lock",
  // lib/ops/demo.ts renders noses with lab/synth and calls the API through packages/sdk.
  sources: ["lib", "lab", "packages", "prisma"],
  parts: [...Object.keys(ENTRIES).map((name) => `${name}.mjs`), ENGINE_WORKER],
};

/** Compiles every process entry and the engine's worker into `slot`. */
async function compileProcesses(slot) {
  const outdir = path.join(root, slot);
  try {
    await import("esbuild");
  } catch {
    throw new Error(`no build of the current sources in ${PROCESS_BUILD.slots.join(" or ")}, and no esbuild to compile one: run npm run build where the dev dependencies are installed`);
  }
  await bundle({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, entry]) => [name, path.join(root, entry)])),
    outdir,
    outExtension: { ".js": ".mjs" },
    // Chunks load when first imported (ops answers --help before loading a database client) and sit
    // beside the entries, where the data files the engine's modules open are copied.
    splitting: true,
    chunkNames: "[name]-[hash]",
  });
  await compileEngine(outdir);
}

/**
 * The module of one process entry, from the build of the current sources (compiled first when there is
 * none), held for this process until it exits. Its engine threads run the engine compiled with it.
 */
export async function importProcessEntry(name) {
  let held;
  try {
    held = await ensureBuild(root, compileProcesses, (line) => console.error(`rhinarium: ${line}`), PROCESS_BUILD);
  } catch (error) {
    console.error(`rhinarium: ${error.message}`);
    process.exit(1);
  }
  process.on("exit", held.release);
  process.env.ENGINE_WORKER_ENTRY = path.join(root, held.slot, ENGINE_WORKER);
  return import(pathToFileURL(path.join(root, held.slot, `${name}.mjs`)).href);
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  if (process.argv.includes("--check")) {
    const plan = planStart(root, sourceHash(root, PROCESS_BUILD), PROCESS_BUILD);
    if (plan.action !== "serve") {
      console.error("rhinarium: no finished build of the process entries matches the current sources");
      process.exit(1);
    }
    console.log(`process entries current: ${plan.slot}`);
  } else {
    const started = Date.now();
    const { slot, built, release } = await ensureBuild(root, compileProcesses, () => {}, PROCESS_BUILD);
    release();
    console.log(`process entries ${built ? "compiled" : "current"}: ${slot} (${Date.now() - started} ms)`);
  }
}
