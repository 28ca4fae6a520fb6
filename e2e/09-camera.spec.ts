import { expect, test } from "@playwright/test";
import config from "../playwright.config";
import { readState, screenshot, signIn } from "./fixtures";

// Live camera capture with Chromium's fake camera (a generated test pattern, permission granted):
// the rear camera opens under a framing circle, live guidance reads each frame, the shutter adds the
// framed square to the nose images like a dropped JPEG, which the engine then judges.

const launch = config.use?.launchOptions ?? {};
test.use({
  launchOptions: { ...launch, args: [...(launch.args ?? []), "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"] },
  permissions: ["camera"],
});

for (const [name, viewport] of [["desktop", { width: 1280, height: 900 }], ["phone", { width: 390, height: 844 }]] as const) {
  test(`takes a nose photo with the camera (${name})`, async ({ page }) => {
    const state = readState();
    await page.setViewportSize(viewport);
    await signIn(page, state.users.staffA);
    await page.goto("/dashboard/capture/identify");
    await page.getByTestId("open-camera").click();
    await expect(page.getByTestId("camera-video")).toBeVisible();
    await expect.poll(() => page.getByTestId("camera-video").evaluate((v: HTMLVideoElement) => v.videoWidth)).toBeGreaterThan(0);
    // Guidance reads the frames (the fake pattern is no nose: any verdict will do, but there is one).
    await expect(page.getByTestId("camera-guidance")).not.toHaveText("Starting the camera…");
    await page.getByTestId("take-photo").click();
    const shot = page.getByTestId("capture-image");
    await expect(shot).toHaveCount(1);
    await expect(shot).toHaveAttribute("data-status", /^(done|error)$/, { timeout: 30_000 });
    await expect(shot.locator("img")).toHaveAttribute("alt", /^camera-\d+\.jpg$/);
    if (name === "phone") expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await screenshot(page, `camera-${name}`);
    await page.getByRole("button", { name: "Close the camera" }).click();
    await expect(page.getByTestId("camera")).toHaveCount(0);
  });
}
