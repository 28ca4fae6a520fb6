#!/usr/bin/env node
// `npm start` (after `next build`; `npm run dev` with --dev): one HTTP server on HOST:PORT for the
// API and the dashboard. /v2 calls go straight from Node's `http` to the API's wrapper
// (lib/api/node-front.ts); everything else, and the few /v2 requests whose answer Next defines, to
// Next's request handler. Next's start-up (instrumentation.ts) opens the database, starts the jobs
// and hands the API over, so there is one module graph and one database client per process.
import http from "node:http";
import path from "node:path";
import next from "next";

const root = path.resolve(import.meta.dirname, "..");
const dev = process.argv.includes("--dev");
const hostname = process.env.HOST || "0.0.0.0";
const port = Number(process.env.PORT || 3000);

/** How long Next's start-up (migrations included) may take before the API is handed over. */
const HANDOVER_TIMEOUT_MS = 180_000;

// instrumentation.ts hands the API over by calling this (lib/api/node-front.ts, exposeApiFront).
const handover = new Promise((resolve, reject) => {
  // lib/process-state.ts: the process's shared state, where lib/api/node-front.ts finds it.
  (globalThis.__rhinarium ??= {}).apiFrontHandover = resolve;
  setTimeout(() => reject(new Error("instrumentation.ts did not hand the API over")), HANDOVER_TIMEOUT_MS).unref();
});
// A dev server runs the engine's worker compiled from the current sources, as a build's server runs its build's.
if (dev) {
  const { compileEngine } = await import("./build-engine.mjs");
  await compileEngine(path.join(root, process.env.NEXT_DIST_DIR || ".next"));
}
const app = next({ dev, dir: root, hostname, port });
const handleNext = app.getRequestHandler();
await app.prepare();
let api;
try {
  api = await handover;
} catch (error) {
  console.error("rhinarium: start-up failed:", error.message);
  process.exit(1);
}
// /v2 goes to the API; the rest through the door (health endpoints, body and target checks) to Next.
const server = http.createServer((req, res) => {
  if (api.claims(req.url ?? "")) void api.serve(req, res);
  else void api.serveOther(req, res, handleNext);
});
api.configure(server);
server.listen(port, hostname, () => console.log(`rhinarium: serving on http://${hostname}:${port}${dev ? " (dev)" : ""}`));
