import { expect, test, type Page } from "@playwright/test";
import { readState, screenshot, signIn } from "./fixtures";

// Clinic staff: sign in, create a pet, register it by dropping nose images, watch the job finish,
// verify it, identify it; the metadata editor refuses text that is not JSON.

test.describe.configure({ mode: "serial" });

let page: Page;
let petId: string;
const state = readState();

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
});

test.afterAll(async () => {
  await page.close();
});

/** Drops files on a dropzone once it takes them (after hydration: a page just loaded may not have its handlers yet). */
async function drop(selector: string, files: string[]) {
  await expect(page.getByTestId(selector)).toHaveAttribute("data-ready", "true");
  await page.getByTestId(`${selector}-input`).setInputFiles(files);
}

test("a wrong password is refused inline, the right one signs in", async () => {
  await page.goto("/dashboard/pets");
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=/);
  await page.getByLabel("E-mail").fill(state.users.staffA);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("sign-in-error")).toHaveText("Wrong e-mail or password.");
  await screenshot(page, "sign-in");
  await signIn(page, state.users.staffA);
  await expect(page).toHaveURL(/\/dashboard\/pets/);
});

test("registers a new pet from dropped nose images and watches the job finish", async () => {
  await page.getByLabel("Breed").first().fill("Beagle");
  await page.getByLabel("Metadata (JSON)").fill('{"name": "Rex", "owner": "J. Smith"}');
  await expect(page.getByTestId("new-metadata-status")).toHaveText("Valid JSON");
  await page.getByRole("button", { name: "Create and register nose images" }).click();
  await expect(page).toHaveURL(/\/dashboard\/capture\/register\?petId=/);
  petId = new URL(page.url()).searchParams.get("petId")!;

  const start = page.getByTestId("start-job");
  await drop("nose-dropzone", state.images.register.slice(0, 3));
  await expect(page.locator('[data-testid="capture-image"][data-status="done"]')).toHaveCount(3, { timeout: 30_000 });
  await expect(start).toBeDisabled(); // 3 of 5 nose images, no appearance photo
  await drop("nose-dropzone", state.images.register.slice(3));
  await drop("appearance-dropzone", [state.images.appearance]);
  await expect(page.locator('[data-testid="capture-image"][data-status="done"]')).toHaveCount(6, { timeout: 30_000 });
  await expect(page.getByTestId("usable-count")).toHaveText("5 of 5 usable");
  await expect(start).toBeEnabled();
  await screenshot(page, "capture-register");
  await start.click();
  await expect(page.getByTestId("job-registered")).toBeVisible({ timeout: 60_000 });

  await page.goto(`/dashboard/pets/${petId}`);
  await expect(page.getByTestId("pet-has-fingerprint")).toHaveText("5 nose images enrolled");
  await expect(page.getByTestId("enrolled-images").locator("img")).toHaveCount(5);
  // Thumbnails are served (to this signed-in user of the account) as JPEGs.
  const src = await page.getByTestId("enrolled-images").locator("img").first().getAttribute("src");
  const image = await page.request.get(src!);
  expect(image.status()).toBe(200);
  expect(image.headers()["content-type"]).toBe("image/jpeg");
  await screenshot(page, "pet");
});

test("the metadata editor refuses text that is not JSON and saves JSON", async () => {
  const editor = page.getByLabel("Metadata (JSON)");
  await editor.fill('{"name": "Rex",');
  await expect(page.getByTestId("edit-metadata-status")).toContainText("Not valid JSON");
  await expect(page.getByRole("button", { name: "Save" })).toBeDisabled();
  await editor.fill('{"name": "Rex", "chip": "250268500000001"}');
  await expect(page.getByTestId("edit-metadata-status")).toHaveText("Valid JSON");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("pet-save-result")).toHaveText("Saved.");
  await page.reload();
  await expect(page.getByLabel("Metadata (JSON)")).toHaveValue(/250268500000001/);
});

test("verifies the pet: verified, with the score on a gauge", async () => {
  await page.goto(`/dashboard/capture/verify?petId=${petId}`);
  await drop("nose-dropzone", state.images.verify);
  await drop("appearance-dropzone", [state.images.appearance]);
  await expect(page.locator('[data-testid="capture-image"][data-status="done"]')).toHaveCount(4, { timeout: 30_000 });
  await page.getByTestId("start-job").click();
  await expect(page.getByTestId("job-progress").or(page.getByTestId("verification-result"))).toBeVisible();
  await expect(page.getByTestId("verification-verdict")).toHaveText("Verified", { timeout: 60_000 });
  await expect(page.getByRole("img", { name: /^Score \d+(\.\d)? of 100, threshold 40$/ })).toBeVisible();
  await screenshot(page, "capture-verify");
});

test("identifies the pet among the account's pets, best candidate first with its photo", async () => {
  await page.goto("/dashboard/capture/identify");
  await page.getByLabel("Species").selectOption("DOG");
  await drop("nose-dropzone", state.images.identify);
  await drop("appearance-dropzone", [state.images.appearance]);
  await expect(page.locator('[data-testid="capture-image"][data-status="done"]')).toHaveCount(4, { timeout: 30_000 });
  await page.getByTestId("start-job").click();
  const first = page.getByTestId("candidate").first();
  await expect(first).toBeVisible({ timeout: 60_000 });
  await expect(first.getByTestId("candidate-pet")).toHaveText(petId);
  await expect(first.locator("img")).toBeVisible();
  // Account B's registered pet is never a candidate in account A.
  await expect(page.getByTestId("candidates")).not.toContainText(state.petB);
  await screenshot(page, "capture-identify");
});

test("the pets table searches metadata and filters by fingerprint, on the server", async () => {
  await page.goto("/dashboard/pets");
  await expect(page.getByTestId("pets-table")).toContainText(petId);
  await expect(page.getByTestId("pets-table")).toContainText("Blurry");
  await page.getByLabel("Has fingerprint").selectOption("yes");
  await expect(page).toHaveURL(/fingerprint=yes/);
  await expect(page.getByTestId("pets-table")).not.toContainText("Blurry");
  await expect(page.getByTestId("pets-table")).toContainText(petId);
  await page.getByLabel("Search id, breed or metadata").fill("250268500000001");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/q=250268500000001/);
  await expect(page.getByTestId("pets-table").locator("tbody tr")).toHaveCount(1);
  await page.goto("/dashboard/pets");
  await screenshot(page, "pets");
});

test("works at phone width for capture at the counter", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/dashboard/capture/verify?petId=${petId}`);
  await expect(page.getByTestId("nose-dropzone")).toBeVisible();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await screenshot(page, "capture-phone");
});
