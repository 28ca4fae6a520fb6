import { expect, test } from "@playwright/test";
import { readState, screenshot, signIn } from "./fixtures";

// Manager: usage over time and the match score charts, with the decision threshold drawn.

test("the manager sees usage, jobs, latency and the score charts", async ({ page }) => {
  const state = readState();
  await signIn(page, state.users.managerA);
  await expect(page).toHaveURL(/\/dashboard\/usage/);
  for (const chart of ["chart-calls", "chart-jobs", "chart-verification-scores", "chart-histogram", "chart-det"]) {
    await expect(page.getByTestId(chart).getByRole("application")).toBeVisible();
  }
  // One failed and (after the staff journey) one successful registration: 50 %.
  await expect(page.getByTestId("fte-rate")).toHaveText("50.0 %");
  await expect(page.getByTestId("latency-table")).toContainText("FINGERPRINT_ADDITION");
  await expect(page.getByTestId("chart-histogram")).toContainText("threshold 40");
  await expect(page.getByTestId("chart-det")).toContainText("threshold 40");
  // Score axes run 0 to 100, the top of the scale ticked (the x axis's ticks come first in the chart's text).
  for (const chart of ["chart-histogram", "chart-verification-scores"]) {
    await expect(page.getByTestId(chart).getByRole("application")).toHaveText(/^0\s*20\s*40\s*60\s*80\s*100\s*[^0-9]?\s*\d/);
  }
  await screenshot(page, "usage");
});

// Its two sign-ins count against an address of their own (e2e/serve.mjs trusts the browser's X-Forwarded-For):
// the specs on 127.0.0.1 share 30 sign-ins per 15 minutes.
test.describe(() => {
test.use({ extraHTTPHeaders: { "x-forwarded-for": "203.0.113.3" } });

test("usage has a date range, and the jobs figures drill down into the jobs explorer", async ({ page }) => {
  const state = readState();
  await signIn(page, state.users.managerA);
  const range = page.getByTestId("usage-range");
  await expect(range.getByRole("link", { name: "Last 30 days" })).toHaveAttribute("aria-current", "page");
  await range.getByRole("link", { name: "Last 7 days" }).click();
  await expect(page).toHaveURL(/days=7/);
  await expect(range.getByRole("link", { name: "Last 7 days" })).toHaveAttribute("aria-current", "page");
  await expect(page.getByText("API calls by day and key (last 7 days)")).toBeVisible();
  // An unknown range is the default one, not an error.
  await page.goto("/dashboard/usage?days=9999");
  await expect(page.getByText("API calls by day and key (last 30 days)")).toBeVisible();
  // A manager sees the counts; the explorer is not theirs, so they are not links.
  await expect(page.getByTestId("jobs-drill-down")).toContainText("Registration:");
  await expect(page.getByTestId("jobs-drill-down").getByRole("link")).toHaveCount(0);

  // The owner may open the explorer: "1 failed" registration leads to that failed job.
  await page.context().clearCookies();
  await signIn(page, state.users.ownerA);
  await page.goto("/dashboard/usage?days=7");
  await page.getByTestId("jobs-drill-down").getByRole("link", { name: /failed/ }).first().click();
  await expect(page).toHaveURL(/\/dashboard\/jobs\?kind=FINGERPRINT_ADDITION&status=FAILED&from=/);
  await expect(page.getByTestId("job-row").first()).toBeVisible();
  await expect(page.getByTestId("jobs-table")).toContainText(state.failedJobId.slice(0, 12));
});
});
