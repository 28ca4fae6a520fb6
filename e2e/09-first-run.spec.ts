import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { screenshot } from "./fixtures";

// A new installation: a server of its own on a new, empty data folder (the shared e2e server already
// has users). Sign-in leads to /setup; setup creates the operator, the first clinic and its owner once;
// then /setup is closed and the owner signs in.

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

let server: ChildProcess;
let dataDir: string;
let base: string;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-e2e-first-run-"));
  // What e2e/serve.mjs runs: the production build in .next.
  server = spawn(process.execPath, [path.join("scripts", "server.mjs")], {
    stdio: "ignore",
    env: {
      ...process.env,
      NODE_ENV: "production",
      NEXT_DIST_DIR: "",
      NEXT_MANUAL_SIG_HANDLE: "true",
      DATA_DIR: dataDir,
      DATABASE_URL: "",
      REDIS_URL: "",
      JOB_RUNNER: "embedded",
      LOG_LEVEL: "error",
      HOST: "127.0.0.1",
      PORT: String(port),
      NEXTAUTH_URL: base,
    },
  });
  const deadline = Date.now() + 150_000;
  for (;;) {
    const answered = await fetch(`${base}/sign-in`).then((r) => r.ok, () => false);
    if (answered) break;
    if (Date.now() > deadline) throw new Error("the first-run server did not start");
    await new Promise((r) => setTimeout(r, 500));
  }
});

test.afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test("with no user, sign-in leads to setup, which runs once; then the owner signs in", async ({ page }) => {
  await page.goto(`${base}/sign-in`);
  await expect(page).toHaveURL(`${base}/setup`);
  await expect(page.getByRole("heading", { name: "Set up Rhinarium" })).toBeVisible();
  // The form submits through a server action once React has hydrated it.
  await page.waitForLoadState("networkidle");

  await page.locator("#operatorEmail").fill("ops@rhinarium.test");
  await page.locator("#operatorPassword").fill("short");
  await page.locator("#accountName").fill("Riverside Clinic");
  await page.locator("#ownerEmail").fill("owner@riverside.test");
  await page.locator("#ownerPassword").fill("owner-password-1");
  await page.getByRole("button", { name: "Set up" }).click();
  await expect(page.getByTestId("setup-error")).toContainText("Some fields are not valid");
  await expect(page.getByText("must be at least 10 characters")).toBeVisible();

  await page.locator("#operatorPassword").fill("operator-password-1");
  await page.locator("#plan").selectOption("standard");
  await screenshot(page, "setup");
  await page.getByRole("button", { name: "Set up" }).click();
  await expect(page.getByTestId("setup-done")).toBeVisible();
  const apiKey = (await page.getByTestId("setup-api-key").textContent())!.trim();
  expect(apiKey).toMatch(/^rk_/);
  const pets = await fetch(`${base}/v2/pets`, { headers: { "x-service-api-key": apiKey } });
  expect(pets.status).toBe(200);

  // Closed for good: the page sends to sign-in, which now says how to get an account.
  await page.goto(`${base}/setup`);
  await expect(page).toHaveURL(`${base}/sign-in`);
  await expect(page.getByTestId("sign-in-help")).toContainText("Settings");

  await page.getByLabel("E-mail").fill("owner@riverside.test");
  await page.getByLabel("Password").fill("owner-password-1");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toContainText("owner@riverside.test");
});
