import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { readState, signIn, type E2eState } from "./fixtures";

// An axe scan (WCAG 2 A/AA rules) of every page, as the role that sees it, at desktop and phone
// width: no serious or critical violation.

async function scan(page: Page, url: string) {
  await page.goto(url);
  await page.waitForLoadState("load");
  const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`), url).toEqual([]);
}

const pages: [keyof E2eState["users"], (s: E2eState) => Promise<string[]> | string[]][] = [
  ["staffA", () => ["/dashboard/pets", "/dashboard/capture/identify", "/dashboard/not-a-page"]],
  ["supportA", (s) => ["/dashboard/jobs", `/dashboard/jobs/${s.failedJobId}`]],
  ["managerA", () => ["/dashboard/usage", "/dashboard/usage?days=7", "/dashboard/profile"]],
  ["ownerA", () => ["/dashboard/settings", "/dashboard/audit"]],
  ["admin", () => ["/dashboard/accounts"]],
];

for (const [name, viewport] of [["desktop", { width: 1280, height: 900 }], ["phone", { width: 390, height: 844 }]] as const) {
  test(`no serious accessibility violation on any page (${name})`, async ({ page }) => {
    const state = readState();
    await page.setViewportSize(viewport);
    await scan(page, "/");
    await scan(page, "/sign-in");
    // The 404 outside the dashboard: styled, and its scripts allowed by the page's CSP (no console errors).
    const cspErrors: string[] = [];
    page.on("console", (m) => m.type() === "error" && /Content Security Policy/i.test(m.text()) && cspErrors.push(m.text()));
    await scan(page, "/no-such-page");
    await expect(page.getByTestId("site-not-found")).toBeVisible();
    expect(cspErrors).toEqual([]);
    for (const [user, urls] of pages) {
      await page.context().clearCookies();
      await signIn(page, state.users[user]);
      for (const url of await urls(state)) await scan(page, url);
      if (user === "staffA") {
        // A pet's page and its capture pages.
        await page.goto("/dashboard/pets");
        const href = await page.getByTestId("pet-link").first().getAttribute("href");
        await scan(page, href!);
        await scan(page, `/dashboard/capture/register?petId=${href!.split("/").pop()}`);
      }
    }
  });
}
