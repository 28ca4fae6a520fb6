import fs from "node:fs";
import path from "node:path";
import { expect, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { invitationTokenIn, outboxMessages } from "../lab/test-support/outbox";

// What the global setup seeded (users of two accounts, a failed job, account B's pet), shared with the specs.

export const PASSWORD = "e2e-password-correct-horse";

/** How long a spec waits for a browser context it opened itself to close. */
const CONTEXT_CLOSE_WAIT_MS = 10_000;

/**
 * Closes a browser context a spec opened itself. Debian's Chromium now and then never answers a context's close (the
 * 11-people spec hung in one, after a signed-in dashboard page, until the test timed out): the spec goes on after
 * CONTEXT_CLOSE_WAIT_MS, and the context ends with the browser at the end of the run.
 */
export async function closeContext(context: BrowserContext): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = context.close().catch(() => undefined);
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CONTEXT_CLOSE_WAIT_MS)))]);
  clearTimeout(timer);
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
  // browser, so wait for it rather than race it with the next navigation.
  await page.waitForURL((url) => url.pathname.startsWith("/dashboard/"));
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
 * Invites `email` from the owner's Settings page, then, as the invited person in a browser of their own, opens the
 * link the e-mail carries (the server's outbox: no SMTP relay in tests) and chooses `password`.
 */
export async function inviteAndAccept(ownerPage: Page, browser: Browser, email: string, password: string, role = "staff"): Promise<void> {
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
  const context = await browser.newContext();
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
