import { expect, test, type Page } from "@playwright/test";
import { dragAndDrop, drop as dropOn, readState, screenshot, signIn } from "./fixtures";

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

const drop = (testId: string, files: string[]) => dropOn(page, testId, files);
const done = () => page.locator('[data-testid="capture-image"][data-status="done"]');

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

test("registers a new pet by name from dropped nose images, counting only usable JPEGs, and watches the job finish", async () => {
  await page.getByLabel("Name", { exact: true }).fill("Rex");
  await page.getByLabel("Owner", { exact: true }).fill("J. Smith");
  await page.getByLabel("Breed").first().fill("Beagle");
  await expect(page.getByTestId("new-metadata-status")).toHaveText("Valid JSON");
  await page.getByRole("button", { name: "Create and register nose images" }).click();
  await expect(page).toHaveURL(/\/dashboard\/capture\/register\?petId=/);
  petId = new URL(page.url()).searchParams.get("petId")!;
  await expect(page.getByText("Pet created: now register its nose images.")).toBeVisible();
  await expect(page.getByRole("link", { name: "Rex" })).toBeVisible();

  const start = page.getByTestId("start-job");
  // A PNG is refused with the reason, an out-of-focus JPEG is unusable: neither counts, both can be removed.
  await drop("nose-dropzone", [state.images.png]);
  await expect(page.getByTestId("capture-image-error")).toContainText("JPEG only");
  await drop("nose-dropzone", [...state.images.register.slice(0, 4), state.images.blurred]);
  await expect(done()).toHaveCount(5, { timeout: 30_000 });
  await expect(page.getByTestId("usable-count")).toHaveText("4 of 5 usable");
  await dragAndDrop(page, "appearance-dropzone", state.images.appearance, "image/jpeg");
  await expect(done()).toHaveCount(6, { timeout: 30_000 });
  await expect(start).toBeDisabled(); // 4 usable of 5 needed: the unusable one does not count
  await expect(page.getByTestId("start-needs")).toContainText("5 usable nose images (4 so far)");
  await screenshot(page, "capture-unusable");
  await page.getByRole("button", { name: "Remove photo.png" }).click();
  // An unusable photo can be cropped to the nose pad: the cut-out replaces it and is checked anew.
  await page.getByRole("button", { name: /^Crop blurred/ }).click();
  const cropDialog = page.getByTestId("crop-dialog");
  const frame = cropDialog.getByTestId("crop-frame");
  await expect(frame).toBeVisible();
  await cropDialog.getByLabel("Frame size").fill("50");
  const before = (await frame.boundingBox())!;
  await frame.focus();
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  expect((await frame.boundingBox())!.x).toBeGreaterThan(before.x);
  // Dragged with the pointer too.
  await page.mouse.move(before.x + before.width / 2, before.y + before.height / 2);
  await page.mouse.down();
  await page.mouse.move(before.x + before.width / 2, before.y + before.height / 2 + 20, { steps: 4 });
  await page.mouse.up();
  expect((await frame.boundingBox())!.y).toBeGreaterThan(before.y);
  await expect(cropDialog.getByTestId("crop-size-px")).toHaveText(/^\d+ × \d+ px$/);
  await cropDialog.getByRole("button", { name: "Use this crop" }).click();
  await expect(cropDialog).toHaveCount(0);
  const cropped = page.getByTestId("capture-image").filter({ has: page.locator('img[alt$="-crop.jpg"]') });
  await expect(cropped).toHaveAttribute("data-status", "done", { timeout: 30_000 });
  await expect(page.getByTestId("capture-image").filter({ has: page.locator('img[alt^="blurred"]') })).toHaveCount(1); // the original set aside
  await expect(done()).toHaveCount(6, { timeout: 30_000 });
  // Still out of focus: cropping frames a nose, it cannot sharpen one.
  await expect(page.getByTestId("usable-count")).toHaveText("4 of 5 usable");
  await page.getByRole("button", { name: /^Remove blurred.*-crop\.jpg/ }).click();
  await expect(page.getByTestId("capture-image-error")).toHaveCount(0);
  await drop("nose-dropzone", state.images.register.slice(4));
  await expect(done()).toHaveCount(6, { timeout: 30_000 });
  await expect(page.getByTestId("usable-count")).toHaveText("5 of 5 usable");
  await expect(start).toBeEnabled();
  await screenshot(page, "capture-register");
  await start.click();
  await expect(page.getByTestId("job-registered")).toBeVisible({ timeout: 60_000 });

  await page.goto(`/dashboard/pets/${petId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Rex");
  await expect(page.getByTestId("pet-has-fingerprint")).toHaveText("5 nose images enrolled");
  await expect(page.getByTestId("enrolled-images").locator("img")).toHaveCount(5);
  // Thumbnails are served (to this signed-in user of the account) as JPEGs.
  const src = await page.getByTestId("enrolled-images").locator("img").first().getAttribute("src");
  const image = await page.request.get(src!);
  expect(image.status()).toBe(200);
  expect(image.headers()["content-type"]).toBe("image/jpeg");
  await screenshot(page, "pet");
});

test("pet fields and the JSON editor save together; unsaved edits ask before leaving", async () => {
  await expect(page.getByLabel("Owner", { exact: true })).toHaveValue("J. Smith");
  const editor = page.getByLabel("Other metadata (JSON)");
  await editor.fill('{"chip": ');
  await expect(page.getByTestId("edit-metadata-status")).toContainText("Not valid JSON");
  await expect(page.getByRole("button", { name: "Save" })).toBeDisabled();
  await editor.fill('{"chip": "250268500000001"}');
  await expect(page.getByTestId("edit-metadata-status")).toHaveText("Valid JSON");
  // Leaving with unsaved edits asks; staying keeps them.
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Pets" }).click();
  await expect(page.getByTestId("unsaved-dialog")).toBeVisible();
  await page.getByRole("button", { name: "Stay and keep editing" }).click();
  await expect(page).toHaveURL(new RegExp(`/dashboard/pets/${petId}$`));
  await expect(editor).toHaveValue(/250268500000001/);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Pet saved.")).toBeVisible();
  await expect(page.getByTestId("unsaved-marker")).toHaveCount(0);
  await page.reload();
  await expect(page.getByLabel("Other metadata (JSON)")).toHaveValue(/250268500000001/);
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue("Rex");
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
  await expect(page.getByTestId("verification-result")).toContainText("a score of 40 means about 1 false match in 10,000");
  await screenshot(page, "capture-verify");
});

test("an impostor's nose is 'Not verified', shown beside the enrolled images, never a green success", async () => {
  await page.goto(`/dashboard/capture/verify?petId=${petId}`);
  await drop("nose-dropzone", state.images.impostor);
  await drop("appearance-dropzone", [state.images.appearance]);
  await expect(done()).toHaveCount(4, { timeout: 30_000 });
  await page.getByTestId("start-job").click();
  await expect(page.getByTestId("verification-verdict")).toHaveText("Not verified", { timeout: 60_000 });
  await expect(page.getByTestId("probe-beside-enrolled").locator("img")).toHaveCount(3 + 5);
  await screenshot(page, "capture-not-verified");
  await page.goto(`/dashboard/pets/${petId}`);
  const outcomes = page.getByTestId("job-outcome");
  await expect(outcomes.first()).toContainText("Not verified");
  await expect(outcomes.first()).toHaveAttribute("data-tone", "negative");
  await expect(outcomes.nth(1)).toContainText(/^Verified/);
});

test("identifies the pet by name, saying which pool was searched and how many pets it holds", async () => {
  await page.goto("/dashboard/capture/identify");
  await page.getByLabel("Species").selectOption("DOG");
  await drop("nose-dropzone", state.images.identify);
  await drop("appearance-dropzone", [state.images.appearance]);
  await expect(done()).toHaveCount(4, { timeout: 30_000 });
  await page.getByTestId("start-job").click();
  const first = page.getByTestId("candidate").first();
  await expect(first).toBeVisible({ timeout: 60_000 });
  await expect(first.getByTestId("candidate-pet")).toHaveText("Rex");
  await expect(first.getByTestId("candidate-id")).toHaveText(petId);
  await expect(first.locator("img")).toBeVisible();
  await expect(page.getByTestId("searched-pool")).toContainText("Searched the default pool: 1 registered dog.");
  // Account B's registered pet is never a candidate in account A.
  await expect(page.getByTestId("candidates")).not.toContainText(state.petB);
  await screenshot(page, "capture-identify");
  // At phone width the score and the id stay on screen (the id wraps instead of overflowing).
  await page.setViewportSize({ width: 390, height: 844 });
  for (const part of [first.getByText(/match|below threshold/), first.getByTestId("candidate-id"), first.getByTestId("candidate-pet")]) {
    const box = (await part.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
  }
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  await screenshot(page, "capture-identify-phone");
  await page.setViewportSize({ width: 1280, height: 900 });
});

test("a no-match names the empty pool and offers to register a new pet", async () => {
  await page.goto("/dashboard/capture/identify");
  await page.getByLabel("Species").selectOption("CAT");
  await drop("nose-dropzone", state.images.identify);
  await drop("appearance-dropzone", [state.images.appearance]);
  await expect(done()).toHaveCount(4, { timeout: 30_000 });
  await page.getByTestId("start-job").click();
  await expect(page.getByTestId("no-candidates")).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId("searched-pool")).toContainText("Searched the default pool: 0 registered cats.");
  await page.getByRole("link", { name: "Register as a new pet" }).click();
  await expect(page).toHaveURL(/\/dashboard\/pets\?new=CAT/);
  await expect(page.getByLabel("Species", { exact: true }).first()).toHaveValue("CAT");
});

test("deleting a pet asks for its name first", async () => {
  await page.goto("/dashboard/pets");
  await page.getByLabel("Name", { exact: true }).fill("Temporary");
  await page.getByRole("button", { name: "Create and register nose images" }).click();
  await expect(page).toHaveURL(/\/dashboard\/capture\/register\?petId=/);
  const tempId = new URL(page.url()).searchParams.get("petId")!;
  await page.goto(`/dashboard/pets/${tempId}`);
  await expect(page.getByRole("button", { name: "Verify" })).toBeDisabled(); // nothing enrolled
  await page.getByRole("button", { name: "Delete" }).click();
  const dialog = page.getByTestId("confirm-dialog");
  await expect(dialog.getByRole("button", { name: "Delete pet" })).toBeDisabled();
  await dialog.getByLabel(/Type Temporary to confirm/).fill("Temporary");
  await dialog.getByRole("button", { name: "Delete pet" }).click();
  await expect(page).toHaveURL(/\/dashboard\/pets$/);
  await expect(page.getByText("Temporary deleted.")).toBeVisible();
  await page.goto(`/dashboard/pets/${tempId}`);
  await expect(page.getByTestId("not-found")).toBeVisible();
});

test("the pets table shows names, searches metadata and filters by fingerprint, on the server", async () => {
  await page.goto("/dashboard/pets");
  await expect(page.getByTestId("pets-table").getByRole("link", { name: "Rex" })).toBeVisible();
  await expect(page.getByTestId("pets-table")).toContainText(petId);
  await expect(page.getByTestId("pets-table")).toContainText("Blurry");
  await page.getByLabel("Has fingerprint").selectOption("yes");
  await expect(page).toHaveURL(/fingerprint=yes/);
  await expect(page.getByTestId("pets-table")).not.toContainText("Blurry");
  await expect(page.getByTestId("pets-table")).toContainText(petId);
  await page.getByLabel("Search name, id, breed or metadata").fill("250268500000001");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/q=250268500000001/);
  await expect(page.getByTestId("pets-table").locator("tbody tr")).toHaveCount(1);
  // Sorting keeps answering: the third click on a header sorts ascending again.
  await page.goto("/dashboard/pets");
  const species = page.getByRole("button", { name: /^Species/ });
  for (const dir of ["asc", "desc", "asc"]) {
    await species.click();
    await expect(page).toHaveURL(new RegExp(`sort=species&dir=${dir}|dir=${dir}.*sort=species`));
  }
  // A page past the end goes to the last page.
  await page.goto("/dashboard/pets?page=99");
  await expect(page).toHaveURL(/page=1/);
  await expect(page.getByTestId("pets-table")).toBeVisible();
  await page.goto("/dashboard/pets");
  await screenshot(page, "pets");
});

test("works at phone width: capture, pets and the pet page fit 390 px", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const [url, name] of [
    [`/dashboard/capture/verify?petId=${petId}`, "capture-phone"],
    ["/dashboard/pets", "pets-phone"],
    [`/dashboard/pets/${petId}`, "pet-phone"],
  ] as const) {
    await page.goto(url);
    await expect(page.locator("main h1")).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, url).toBeLessThanOrEqual(0);
    await screenshot(page, name);
  }
  // The pets table shows the name on screen, not only the id.
  await page.goto("/dashboard/pets");
  const name = (await page.getByTestId("pets-table").getByRole("link", { name: "Rex" }).boundingBox())!;
  expect(name.x + name.width).toBeLessThanOrEqual(390);
  const heading = (await page.goto(`/dashboard/pets/${petId}`), await page.locator("main h1").boundingBox())!;
  expect(heading.x + heading.width).toBeLessThanOrEqual(390);
  await expect(page.locator("main h1")).toContainText("Rex");
});
