#!/usr/bin/env node
// `npm start`: serve the production build of the current sources, building it first only when
// there is none (scripts/build-slots.mjs: two slot folders, a source hash stamped into each build,
// never a rebuild under a running server), then run scripts/server.mjs in this process.
import { spawn } from "node:child_process";
import path from "node:path";
import { compileEngine } from "./build-engine.mjs";
import { ensureBuild } from "./build-slots.mjs";

const root = path.resolve(import.meta.dirname, "..");

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`usage: npm start

Serves the API and the dashboard on HOST:PORT (default 0.0.0.0:3000). Builds first (next build and the
engine's worker, into .next-a or .next-b) only when no finished build matches the current sources; a build never touches a
slot that a running server uses. Configuration: see README.md.`);
  process.exit(0);
}

/** What `npm run build` does, into `slot`: next build, then the engine's worker compiled beside it. */
async function build(slot) {
  await nextBuild(slot);
  await compileEngine(path.join(root, slot));
}

function nextBuild(slot) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, NEXT_DIST_DIR: slot, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => (code === 0 ? resolve() : reject(new Error(`next build failed (${signal ?? `exit code ${code}`})`))));
  });
}

let held;
try {
  held = await ensureBuild(root, build, (line) => console.log(`rhinarium: ${line}`));
} catch (error) {
  console.error(`rhinarium: ${error.message}`);
  process.exit(1);
}
if (!held.built) console.log(`rhinarium: serving the existing build in ${held.slot}`);
process.on("exit", held.release);
process.env.NEXT_DIST_DIR = held.slot;
process.env.NODE_ENV = "production";
// The server closes the database and the job queue itself on SIGTERM/SIGINT (lib/server/start.ts).
process.env.NEXT_MANUAL_SIG_HANDLE = "true";
await import("./server.mjs");
