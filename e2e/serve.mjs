// The e2e web server: the production build on 127.0.0.1:E2E_PORT with DATA_DIR=E2E_DATA_DIR (a new,
// empty folder, removed when the server stops), jobs in-process. Reuses the existing build (`npm test` made it for the contract
// tests); builds when there is none or when E2E_BUILD=1.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };

// `npm run build`, not `next build` alone: the server's engine threads run the worker compiled with it.
if (process.env.E2E_BUILD === "1" || !fs.existsSync(path.join(root, ".next", "BUILD_ID"))) {
  const build = spawnSync("npm", ["run", "build"], { cwd: root, env, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

// What `npm start` runs after its build.
const server = spawn(process.execPath, [path.join(root, "scripts", "server.mjs")], {
  cwd: root,
  stdio: "inherit",
  env: {
    ...env,
    NODE_ENV: "production",
    DATA_DIR: process.env.E2E_DATA_DIR,
    DATABASE_URL: "",
    JOB_RUNNER: "embedded",
    LOG_LEVEL: "error",
    NEXT_MANUAL_SIG_HANDLE: "true",
    HOST: "127.0.0.1",
    // The browser is the "proxy": a spec may name its client address (X-Forwarded-For) so that its
    // sign-ins count against an address of its own, not the 30 per 15 minutes every spec shares.
    TRUSTED_PROXIES: "127.0.0.1",
    // The webhooks spec's receiver listens on this machine, over http.
    WEBHOOKS_ALLOW_PRIVATE: "1",
    PORT: process.env.E2E_PORT,
    NEXTAUTH_URL: `http://127.0.0.1:${process.env.E2E_PORT}`,
  },
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => {
  // The data folder is this run's alone (a new temporary folder): remove it once the server is down.
  if (process.env.E2E_DATA_DIR?.includes("rhinarium-e2e-")) fs.rmSync(process.env.E2E_DATA_DIR, { recursive: true, force: true });
  process.exit(code ?? 0);
});
