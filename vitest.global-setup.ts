import fs from "node:fs";
import path from "node:path";
import { compileEngine } from "./scripts/build-engine.mjs";

// The engine's worker threads run in tests as in a build's server: compiled (scripts/build-engine.mjs),
// once per test run from the current sources, into a folder under node_modules (so that its packages,
// such as sharp, resolve). The test files' processes inherit ENGINE_WORKER_ENTRY
// (lib/biometrics/engine-pool.ts, workerEntryPath); the servers the suites start run their build's own.
export default async function setup(): Promise<() => void> {
  const cache = path.join(import.meta.dirname, "node_modules", ".cache");
  fs.mkdirSync(cache, { recursive: true });
  const distDir = fs.mkdtempSync(path.join(cache, "rhinarium-test-engine-"));
  process.env.ENGINE_WORKER_ENTRY = await compileEngine(distDir);
  return () => fs.rmSync(distDir, { recursive: true, force: true });
}
