import { expect } from "@playwright/test";
import { inviteAndAccept, readState, screenshot, signIn, test } from "./fixtures";

// Owner: reissue the API key (shown once); the old key stops working at once, the new one works.

test("the owner reissues the API key", async ({ page, request, otherBrowser }) => {
  const state = readState();
  const petsWith = (key: string) => request.get("/v2/pets", { headers: { "x-service-api-key": key } });
  expect((await petsWith(state.keyA)).status()).toBe(200);

  await signIn(page, state.users.ownerA);
  await expect(page).toHaveURL(/\/dashboard\/settings/);
  await expect(page.getByTestId("plan")).toContainText("standard");
  // Irreversible: a confirmation first (no browser confirm()).
  await page.getByRole("button", { name: /^Reissue/ }).click();
  await page.getByTestId("confirm-dialog").getByRole("button", { name: "Deactivate all and reissue" }).click();
  await expect(page.getByText("Keys reissued: every earlier key is inactive.")).toBeVisible();
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

  // Deactivating a key asks for its prefix to be typed.
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(page.getByText("Key created.")).toBeVisible();
  const extra = (await page.getByTestId("new-api-key-value").textContent())!;
  await page.reload();
  const row = page.getByTestId("api-key-row").filter({ hasText: extra.slice(0, 8) });
  const prefix = (await row.locator("td").nth(1).textContent())!.replace("…", "");
  expect(extra.startsWith(prefix)).toBe(true);
  await row.getByRole("button", { name: "Deactivate" }).click();
  const dialog = page.getByTestId("confirm-dialog");
  await expect(dialog.getByRole("button", { name: "Deactivate key" })).toBeDisabled();
  await dialog.getByRole("textbox").fill(prefix);
  await dialog.getByRole("button", { name: "Deactivate key" }).click();
  await expect(page.getByText(`Key ${prefix}… deactivated.`)).toBeVisible();
  await expect(row).toHaveAttribute("data-active", "false");
  expect((await petsWith(extra)).status()).toBe(401);

  // Team: a role change is saved with a toast (and undo); removal asks first.
  await page.getByLabel("Role of staff@a.test").selectOption("support");
  await expect(page.getByText("staff@a.test is now support.")).toBeVisible();
  await page.getByRole("button", { name: "Undo" }).click();
  await expect(page.getByText("staff@a.test is now staff.")).toBeVisible();
  await inviteAndAccept(page, otherBrowser, "temp@a.test", "a-long-enough-password");
  await page.getByTestId("team").locator("tr", { hasText: "temp@a.test" }).getByRole("button", { name: "Remove" }).click();
  await page.getByTestId("confirm-dialog").getByRole("button", { name: "Remove member" }).click();
  await expect(page.getByText("temp@a.test removed.")).toBeVisible();
  await expect(page.getByTestId("team")).not.toContainText("temp@a.test");

  // Pet fields: the account chooses the metadata keys its forms show.
  await page.getByLabel("Fields (comma-separated keys)").fill("name, owner, microchip, ward");
  await expect(page.getByTestId("pet-fields-preview")).toHaveText("Form shows: Name · Owner · Microchip · Ward");
  await page.getByRole("button", { name: "Save fields" }).click();
  await expect(page.getByText("Pet fields saved.")).toBeVisible();
  await page.getByLabel("Fields (comma-separated keys)").fill("name, 1bad");
  await page.getByRole("button", { name: "Save fields" }).click();
  await expect(page.getByText("Some fields are not valid.")).toBeVisible();

  // Phone width: the key and team tables stay inside the page.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  await screenshot(page, "settings-phone");
  await page.setViewportSize({ width: 1280, height: 900 });

  await page.goto("/dashboard/audit");
  await expect(page.getByTestId("audit-log")).toContainText("key.reissue");
  await expect(page.getByTestId("audit-log")).toContainText(state.users.ownerA);
  await screenshot(page, "audit");
});
