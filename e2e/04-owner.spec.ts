import { expect, test } from "@playwright/test";
import { readState, screenshot, signIn } from "./fixtures";

// Owner: reissue the API key (shown once); the old key stops working at once, the new one works.

test("the owner reissues the API key", async ({ page, request }) => {
  const state = readState();
  const petsWith = (key: string) => request.get("/v2/pets", { headers: { "x-service-api-key": key } });
  expect((await petsWith(state.keyA)).status()).toBe(200);

  await signIn(page, state.users.ownerA);
  await expect(page).toHaveURL(/\/dashboard\/settings/);
  await expect(page.getByTestId("plan")).toContainText("standard");
  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: /^Reissue/ }).click();
  const shown = page.getByTestId("new-api-key-value");
  await expect(shown).toHaveText(/^rk_/);
  const newKey = (await shown.textContent())!;
  await expect(page.getByTestId("api-key-row").and(page.locator('[data-active="true"]'))).toHaveCount(1);
  await screenshot(page, "settings");

  expect((await petsWith(state.keyA)).status()).toBe(401);
  expect((await petsWith(newKey)).status()).toBe(200);
  // The key is shown once: a reload shows only its prefix.
  await page.reload();
  await expect(page.getByTestId("new-api-key")).toHaveCount(0);
  await expect(page.locator("body")).not.toContainText(newKey);

  await page.goto("/dashboard/audit");
  await expect(page.getByTestId("audit-log")).toContainText("key.reissue");
  await expect(page.getByTestId("audit-log")).toContainText(state.users.ownerA);
  await screenshot(page, "audit");
});
