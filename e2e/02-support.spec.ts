import { expect, test } from "@playwright/test";
import { readState, screenshot, signIn } from "./fixtures";

// Support: the jobs explorer across kinds, and a deliberately failed job's reason, which the API never returns.

test("support finds the failed registration and reads what to tell the clinic", async ({ page }) => {
  const state = readState();
  await signIn(page, state.users.supportA);
  await expect(page).toHaveURL(/\/dashboard\/jobs/);
  await page.getByLabel("Status").selectOption("FAILED");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/status=FAILED/);
  const rows = page.getByTestId("job-row");
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("out of focus");
  await screenshot(page, "jobs");

  // Registration jobs have ids of the same form as every other job (a cuid), not UUIDs.
  expect(state.failedJobId).toMatch(/^c[a-z0-9]{24}$/);
  await expect(rows.first().getByRole("link").first()).toHaveText(/^c[a-z0-9]{11}…$/);
  await rows.first().getByRole("link").first().click();
  await expect(page).toHaveURL(new RegExp(`/dashboard/jobs/${state.failedJobId}$`));
  await expect(page.getByTestId("failure-summary")).toContainText(/out of focus or motion-blurred in \d of 5 images/);
  await expect(page.getByTestId("failure-summary")).toContainText("capture again closer");
  await expect(page.getByTestId("job-images").locator("tbody tr")).toHaveCount(5);
  await expect(page.getByTestId("job-images")).toContainText("unusable");
  await screenshot(page, "job-failed");

  // Outcomes, not bare statuses: the impostor verification of the staff journey reads "Not verified",
  // and its page says so in words, not JSON.
  await page.goto("/dashboard/jobs?kind=VERIFICATION");
  const notVerified = page.getByTestId("job-row").filter({ hasText: "Not verified" });
  await expect(notVerified).toHaveCount(1);
  await expect(notVerified.getByTestId("job-outcome")).toHaveAttribute("data-tone", "negative");
  await expect(page.getByTestId("job-row").filter({ hasText: /Verified · score/ }).first()).toBeVisible();
  await notVerified.getByRole("link").first().click();
  await expect(page.getByTestId("job-result-summary")).toContainText(/Not verified: score \d+\.\d against a threshold of 40/);
  await expect(page.getByTestId("job-result-summary")).not.toContainText("{");
  await page.goto("/dashboard/jobs?kind=IDENTIFICATION");
  await page.getByTestId("job-row").filter({ hasText: "No match" }).getByRole("link").first().click();
  await expect(page.getByTestId("searched-pool")).toHaveText("Searched the default pool: 0 registered pets of this species.");

  // Support has no pet editing and no settings: the server answers "not found".
  await page.goto("/dashboard/settings");
  await expect(page.getByTestId("not-found")).toBeVisible();
});
