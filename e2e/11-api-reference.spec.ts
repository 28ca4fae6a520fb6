import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";

// The API reference for clinic developers: /v2/docs leads to a page rendered from the served
// OpenAPI document (no key needed), readable at desktop and phone width.

for (const [name, viewport] of [["desktop", { width: 1280, height: 900 }], ["phone", { width: 390, height: 844 }]] as const) {
  test(`/v2/docs shows every operation of the OpenAPI document with its errors and an example (${name})`, async ({ page, request }) => {
    await page.setViewportSize(viewport);
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    const response = await page.goto("/v2/docs");
    expect(response?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe("/api-reference");
    const doc = (await (await request.get("/v2/openapi.json")).json()) as { paths: Record<string, Record<string, { operationId: string; summary: string }>> };
    const operations = Object.values(doc.paths).flatMap((methods) => Object.values(methods));
    expect(operations.length).toBeGreaterThanOrEqual(13);
    for (const op of operations) {
      const section = page.locator(`section#${op.operationId}`);
      await expect(section, op.operationId).toContainText(op.summary);
      await expect(section.getByRole("region", { name: `${op.operationId} example`, exact: true }), op.operationId).toContainText("x-service-api-key: $RHINARIUM_API_KEY");
      await expect(section.getByRole("region", { name: `${op.operationId} example answer` }), op.operationId).toContainText("HTTP 2");
    }
    await expect(page.locator("section#createPet")).toContainText("Idempotency-Key");
    await expect(page.locator("section#createPet")).toContainText("SERVICEB2B10005 PetLimitExceededError");
    await expect(page.getByRole("region", { name: "createPet example", exact: true })).toContainText(`-d '{"species":"DOG","breed":"Beagle"`);
    await expect(page.getByRole("region", { name: "getVerificationJob example answer" })).toContainText('"isVerified": true');
    await expect(page.getByRole("heading", { name: "Error codes" })).toBeVisible();
    // Nothing wider than the screen but the tables and examples, which scroll inside their boxes.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
    expect(errors).toEqual([]);
  });
}
