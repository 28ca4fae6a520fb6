import fs from "node:fs";
import path from "node:path";
import { test as base, expect, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { invitationTokenIn, outboxMessages } from "../lab/test-support/outbox";

// What the global setup seeded (users of two accounts, a failed job, account B's pet), shared with the specs.

export const PASSWORD = "e2e-password-correct-horse";

/** How long a spec waits for a browser context it opened itself to close, and the end of a test for its other browser. */
const CONTEXT_CLOSE_WAIT_MS = 10_000;

function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * `test` with `otherBrowser`: a Chromium of the test's own for the browser contexts a spec opens itself (another
 * person signing in, an invitation opened elsewhere, a copied cookie), killed when the test ends.
 *
 * Why not the worker's `browser`: Debian's Chromium now and then leaves a context's close unanswered, for tens of
 * seconds or for good (Target.disposeBrowserContext sent while the page committed /dashboard's meta-refresh redirect:
 * the page stayed open, and the answer came ~40 s later, when another context closed). A context whose close has begun
 * but not ended stays in Playwright's list of open contexts with its `request` already disposed, and at the start of
 * the next test the trace recording (`trace: "retain-on-failure"`) resumes tracing on every listed context: that next
 * test fails before its first step with "apiRequestContext._wrapApiCall: Target page, context or browser has been
 * closed", whatever fixtures it uses (11-people's API-key journey after the unlock journey). Killing this browser at
 * the end of the test ends such a context with it, so none outlives its test.
 */
export const test = base.extend<{ otherBrowser: Browser }>({
  otherBrowser: async ({ playwright, browserName, launchOptions, headless }, use) => {
    const server = await playwright[browserName].launchServer({ ...launchOptions, headless, handleSIGINT: false });
    try {
      const browser = await playwright[browserName].connect(server.wsEndpoint());
      await use(browser);
      await waitAtMost(browser.close(), CONTEXT_CLOSE_WAIT_MS);
    } finally {
      await server.kill();
    }
  },
});

/**
 * Closes a browser context a spec opened itself (in `otherBrowser`). If the close is not answered within
 * CONTEXT_CLOSE_WAIT_MS the spec goes on, and the context ends when `otherBrowser` is killed at the end of the test.
 */
export async function closeContext(context: BrowserContext): Promise<void> {
  await waitAtMost(context.close(), CONTEXT_CLOSE_WAIT_MS);
}

export interface E2eState {
  accountA: string;
  accountB: string;
  keyA: string;
  users: Record<"staffA" | "supportA" | "managerA" | "ownerA" | "staffB" | "admin" | "lockedA", string>;
  failedJobId: string;
  petB: string;
  petBImageId: string;
  images: { register: string[]; verify: string[]; identify: string[]; appearance: string; impostor: string[]; blurred: string; png: string };
}

export function stateFile(): string {
  return path.join(process.env.E2E_DATA_DIR!, "e2e-state.json");
}

export function readState(): E2eState {
  return JSON.parse(fs.readFileSync(stateFile(), "utf8")) as E2eState;
}

export async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto("/sign-in");
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toContainText(email);
  // /dashboard sends each role to its home page; once streaming has begun that redirect happens in the
  // browser, so wait for it rather than race it with the next navigation. The address is polled, not a navigation
  // awaited: the redirect may abort the navigation in flight (net::ERR_ABORTED), which is not a failure.
  await expect(page).toHaveURL(/^https?:\/\/[^/]+\/dashboard\//);
}

/**
 * A full-page screenshot. The README links the committed copies in docs/screenshots/, which are rewritten
 * only on request (UPDATE_SCREENSHOTS=1), so a test run leaves the work tree clean.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const folder = process.env.UPDATE_SCREENSHOTS === "1" ? path.join("docs", "screenshots") : path.join("test-results", "screenshots");
  await page.screenshot({ path: path.join(folder, `${name}.png`), fullPage: true });
}

/** Drops files on a dropzone once it takes them (after hydration: a page just loaded may not have its handlers yet). */
export async function drop(page: Page, testId: string, files: string[]): Promise<void> {
  await expect(page.getByTestId(testId)).toHaveAttribute("data-ready", "true");
  await page.getByTestId(`${testId}-input`).setInputFiles(files);
}

/** A real drag and drop: a DataTransfer holding the file, dragged over and dropped on the zone. */
export async function dragAndDrop(page: Page, testId: string, file: string, type: string): Promise<void> {
  await expect(page.getByTestId(testId)).toHaveAttribute("data-ready", "true");
  const bytes = fs.readFileSync(file).toString("base64");
  const dataTransfer = await page.evaluateHandle(
    ({ bytes, name, type }) => {
      const transfer = new DataTransfer();
      const binary = Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0));
      transfer.items.add(new File([binary], name, { type }));
      return transfer;
    },
    { bytes, name: path.basename(file), type },
  );
  const zone = page.getByTestId(testId);
  await zone.dispatchEvent("dragenter", { dataTransfer });
  await zone.dispatchEvent("dragover", { dataTransfer });
  await zone.dispatchEvent("drop", { dataTransfer });
}

/**
 * Invites `email` from the owner's Settings page, then, as the invited person in a context of their own in
 * `otherBrowser`, opens the link the e-mail carries (the server's outbox: no SMTP relay in tests) and chooses `password`.
 */
export async function inviteAndAccept(ownerPage: Page, otherBrowser: Browser, email: string, password: string, role = "staff"): Promise<void> {
  const before = outboxMessages(process.env.E2E_DATA_DIR!).length;
  const invite = ownerPage.getByRole("form", { name: "Invite a team member" });
  await invite.getByLabel("E-mail").fill(email);
  await invite.getByLabel("Role").selectOption(role);
  await invite.getByRole("button", { name: "Send invitation" }).click();
  await expect(ownerPage.getByText(`Invitation sent to ${email}.`)).toBeVisible();
  await expect(ownerPage.getByTestId("invitation-row").and(ownerPage.locator(`[data-email="${email}"]`))).toBeVisible();
  const mail = outboxMessages(process.env.E2E_DATA_DIR!).slice(before).find((m) => m.to === email);
  const token = mail && invitationTokenIn(mail.text);
  expect(token, `an invitation link mailed to ${email}`).toBeTruthy();
  const context = await otherBrowser.newContext();
  const page = await context.newPage();
  await page.goto(`/invite/${token}`);
  await expect(page.getByTestId("invitation")).toContainText(email);
  await page.getByLabel("Password (at least 10 characters)").fill(password);
  await page.getByLabel("The password again").fill(password);
  await page.getByRole("button", { name: "Join the team" }).click();
  await expect(page.getByTestId("invitation-accepted")).toBeVisible();
  // The link works once.
  await page.goto(`/invite/${token}`);
  await expect(page.getByTestId("invitation-invalid")).toBeVisible();
  await closeContext(context);
  await ownerPage.reload();
  await expect(ownerPage.getByTestId("team-row").and(ownerPage.locator(`[data-email="${email}"]`))).toBeVisible();
}
