import { expect, test } from "@playwright/test";
import { readState, signIn } from "./fixtures";

// Tenancy on the server: a staff user of account A cannot reach account B's pet, images or jobs by URL.

test("staff of account A cannot reach account B's pet, image or capture by URL", async ({ page }) => {
  const state = readState();
  await signIn(page, state.users.staffA);
  await page.goto(`/dashboard/pets/${state.petB}`);
  await expect(page.getByTestId("not-found")).toBeVisible();
  await expect(page.locator("body")).not.toContainText("Other clinic pet");
  await page.goto(`/dashboard/capture/verify?petId=${state.petB}`);
  await expect(page.getByTestId("not-found")).toBeVisible();
  expect((await page.request.get(`/dashboard/images/fingerprint/${state.petBImageId}`)).status()).toBe(404);
  // Staff B sees it.
  await page.context().clearCookies();
  await signIn(page, state.users.staffB);
  await page.goto(`/dashboard/pets/${state.petB}`);
  await expect(page.getByTestId("pet-id")).toHaveText(state.petB);
  expect((await page.request.get(`/dashboard/images/fingerprint/${state.petBImageId}`)).status()).toBe(200);
});

test("without a session the dashboard and its images redirect to sign-in", async ({ page, request }) => {
  const state = readState();
  await page.goto(`/dashboard/pets/${state.petB}`);
  await expect(page).toHaveURL(/\/sign-in/);
  const image = await request.get(`/dashboard/images/fingerprint/${state.petBImageId}`, { maxRedirects: 0 });
  expect(image.status()).toBe(307);
});

test("every response carries the security headers, pages a CSP with a fresh nonce", async ({ request }) => {
  const res = await request.get("/sign-in");
  const headers = res.headers();
  const scriptSrc = (csp: string) => csp.split(";").find((d) => d.trim().startsWith("script-src"))!;
  expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(scriptSrc(headers["content-security-policy"])).toMatch(/'nonce-[A-Za-z0-9+/=]+'/);
  expect(scriptSrc(headers["content-security-policy"])).not.toContain("unsafe-inline");
  const again = (await request.get("/sign-in")).headers()["content-security-policy"];
  expect(again).not.toBe(headers["content-security-policy"]);
  // The page's own scripts carry the nonce of its response.
  const nonce = /'nonce-([^']+)'/.exec(headers["content-security-policy"])![1];
  expect(await res.text()).toContain(`nonce="${nonce}"`);
  expect((await request.get("/v2/openapi.json")).headers()["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
});
