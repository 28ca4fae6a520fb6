import { expect, test } from "@playwright/test";
import { readState, signIn } from "./fixtures";

// CSRF: a server action replayed from another origin with the victim's cookies is refused (Next
// checks Origin against Host), while the same request from the site's own origin works; next-auth's
// sign-in refuses a POST without its CSRF token.

test("a server action posted from another origin is refused, from the site itself accepted", async ({ page }) => {
  const state = readState();
  await signIn(page, state.users.staffA);
  await page.goto("/dashboard/pets");
  await page.getByTestId("pets-table").locator("tbody tr a").first().click();
  await expect(page.getByTestId("pet-id")).toBeVisible();
  const petUrl = page.url();
  const breedBefore = await page.getByLabel("Breed").inputValue();
  // The save below never reaches the server, so the page keeps unsaved edits: leave anyway.
  page.on("dialog", (dialog) => void dialog.accept());

  // Capture the browser's own "save" action call without letting it reach the server.
  let captured: { url: string; headers: Record<string, string>; body: string } | null = null;
  await page.route(petUrl, async (route) => {
    const req = route.request();
    if (req.method() === "POST" && req.headers()["next-action"]) {
      captured = { url: req.url(), headers: req.headers(), body: req.postData() ?? "" };
      await route.abort();
    } else await route.continue();
  });
  await page.getByLabel("Breed").fill("Forged breed");
  await page.getByRole("button", { name: "Save" }).click();
  await expect.poll(() => captured !== null).toBe(true);
  await page.unroute(petUrl);
  const { url, headers, body } = captured!;

  const replay = (origin: string) => page.request.post(url, { headers: { ...headers, origin }, data: body, failOnStatusCode: false });
  const forged = await replay("http://evil.example");
  expect(forged.status()).toBeGreaterThanOrEqual(400);
  await page.goto(petUrl);
  await expect(page.getByLabel("Breed")).toHaveValue(breedBefore);

  const own = await replay(new URL(petUrl).origin);
  expect(own.status()).toBe(200);
  await page.goto(petUrl);
  await expect(page.getByLabel("Breed")).toHaveValue("Forged breed");
  await page.getByLabel("Breed").fill(breedBefore);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Pet saved.")).toBeVisible();
});

test("next-auth refuses a sign-in POST without its CSRF token", async ({ request }) => {
  const state = readState();
  const res = await request.post("/api/auth/callback/credentials", {
    form: { email: state.users.staffA, password: "e2e-password-correct-horse", json: "true" },
    maxRedirects: 0,
    failOnStatusCode: false,
  });
  const body = await res.text();
  expect(res.headers()["set-cookie"] ?? "").not.toContain("next-auth.session-token");
  expect(body + (res.headers().location ?? "")).toContain("csrf=true");
});
