import { expect, test } from "@playwright/test";
import { readState, screenshot, signIn } from "./fixtures";

// Operator: every account; suspending one makes its API answer 403 10010, reinstating restores it.

test("the operator suspends and reinstates an account", async ({ page }) => {
  const state = readState();
  await signIn(page, state.users.admin);
  await expect(page).toHaveURL(/\/dashboard\/accounts/);
  const rowB = page.getByTestId("accounts").locator("tr", { hasText: state.accountB });
  await expect(page.getByTestId("accounts")).toContainText("Clinic A");
  // Suspension cuts the API at once: the operator types the account's name first.
  await rowB.getByRole("button", { name: "Suspend" }).click();
  const dialog = page.getByTestId("confirm-dialog");
  await expect(dialog.getByRole("button", { name: "Suspend account" })).toBeDisabled();
  await dialog.getByLabel(/Type Clinic B to confirm/).fill("Clinic A");
  await expect(dialog.getByRole("button", { name: "Suspend account" })).toBeDisabled();
  await dialog.getByLabel(/Type Clinic B to confirm/).fill("Clinic B");
  await dialog.getByRole("button", { name: "Suspend account" }).click();
  await expect(rowB).toContainText("suspended");
  await expect(page.getByText("Clinic B suspended.")).toBeVisible();
  await screenshot(page, "accounts");
  // Undo from the toast reinstates.
  await page.getByRole("button", { name: "Undo" }).click();
  await expect(page.getByText("Clinic B reinstated.")).toBeVisible();
  await expect(rowB.getByRole("button", { name: "Suspend" })).toBeVisible();
});
