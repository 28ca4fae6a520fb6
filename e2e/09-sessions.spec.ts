import { expect } from "@playwright/test";
import { closeContext, readState, signIn, test } from "./fixtures";

// Signing out ends the session on the server: the session cookie copied before sign-out (another
// tab, a stolen cookie) no longer opens the dashboard.

test("a session cookie copied before sign-out stops working after it", async ({ page, otherBrowser }) => {
  const state = readState();
  await signIn(page, state.users.supportA);
  const copied = await page.context().cookies();
  expect(copied.some((c) => c.name.includes("next-auth.session-token"))).toBe(true);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/sign-in/);

  const thief = await otherBrowser.newContext();
  await thief.addCookies(copied);
  const stolen = await thief.newPage();
  await stolen.goto("/dashboard/jobs");
  await expect(stolen).toHaveURL(/\/sign-in/);
  await closeContext(thief);

  // Signing in again works.
  await signIn(page, state.users.supportA);
});
