import { expect, test } from "@playwright/test";
import { PASSWORD, readState } from "./fixtures";

// Repeated wrong passwords lock the account: after the fifth, even the right password is refused.

test("five failed sign-ins lock the account, and the form says so", async ({ page }) => {
  const state = readState();
  const attempt = async (password: string) => {
    await page.goto("/sign-in");
    await page.getByLabel("E-mail").fill(state.users.lockedA);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    return page.getByTestId("sign-in-error");
  };
  for (let i = 1; i <= 4; i++) await expect(await attempt(`wrong guess ${i}`)).toHaveText("Wrong e-mail or password.");
  await expect(await attempt("wrong guess 5")).toContainText("locked for 15 minutes");
  await expect(await attempt(PASSWORD)).toContainText("locked for 15 minutes");
  await expect(page).toHaveURL(/\/sign-in/);
});
