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
  await screenshot(page, "usage");
});
