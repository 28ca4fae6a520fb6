import { expect, test } from "@playwright/test";
import { readState, screenshot, signIn } from "./fixtures";

// Operator: every account; suspending one makes its API answer 403 10010, reinstating restores it.

test("the operator suspends and reinstates an account", async ({ page }) => {
  const state = readState();
  await signIn(page, state.users.admin);
  await expect(page).toHaveURL(/\/dashboard\/accounts/);
  const rowB = page.getByTestId("accounts").locator("tr", { hasText: state.accountB });
  await expect(page.getByTestId("accounts")).toContainText("Clinic A");
  await rowB.getByRole("button", { name: "Suspend" }).click();
  await expect(rowB).toContainText("suspended");
  await screenshot(page, "accounts");
  await rowB.getByRole("button", { name: "Reinstate" }).click();
  await expect(rowB.getByRole("button", { name: "Suspend" })).toBeVisible();
});
