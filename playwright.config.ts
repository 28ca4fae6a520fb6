import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { defineConfig } from "@playwright/test";

// The dashboard's end-to-end journeys in Debian's Chromium against the production build (`next start`)
// on its own port and data folder. The build is the one the contract tests made in the same `npm test`
// (e2e/serve.mjs builds only when there is none, or when E2E_BUILD=1).
// The config is evaluated again in each worker process: the port and data folder chosen here go
// into the environment, which the workers inherit, so that every process agrees on them.
function freePortSync(): string {
  const script = "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})";
  return execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }).trim();
}

process.env.E2E_PORT ??= freePortSync();
process.env.E2E_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-e2e-dash-"));
const baseURL = `http://127.0.0.1:${process.env.E2E_PORT}`;

export default defineConfig({
  testDir: "e2e",
  workers: 1,
  fullyParallel: false,
  // One retry in CI, in a fresh worker and browser; the list reporter names a test that passed only on its retry
  // "flaky". The failure it used to cover (a context whose close Chromium never answered, breaking the next test's
  // start) is understood and fixed by `otherBrowser` (e2e/fixtures.ts says how); the retry stays for Chromium faults
  // not yet understood.
  retries: process.env.CI ? 1 : 0,
  timeout: 120_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  globalSetup: "./e2e/global-setup.ts",
  outputDir: "test-results",
  use: {
    baseURL,
    viewport: { width: 1280, height: 900 },
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
  webServer: {
    command: "node e2e/serve.mjs",
    url: `${baseURL}/sign-in`,
    reuseExistingServer: false,
    timeout: 240_000,
    stdout: "ignore",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 15_000 },
    env: {
      E2E_PORT: process.env.E2E_PORT,
      E2E_DATA_DIR: process.env.E2E_DATA_DIR,
    },
  },
});
