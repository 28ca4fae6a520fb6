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

  await rows.first().getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`/dashboard/jobs/${state.failedJobId}$`));
  await expect(page.getByTestId("failure-summary")).toContainText(/out of focus or motion-blurred in \d of 5 images/);
  await expect(page.getByTestId("failure-summary")).toContainText("capture again closer");
  await expect(page.getByTestId("job-images").locator("tbody tr")).toHaveCount(5);
  await expect(page.getByTestId("job-images")).toContainText("unusable");
  await screenshot(page, "job-failed");

  // Support has no pet editing and no settings: the server answers "not found".
  await page.goto("/dashboard/settings");
  await expect(page.getByTestId("not-found")).toBeVisible();
});
