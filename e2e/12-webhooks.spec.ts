import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { readState, screenshot, signIn } from "./fixtures";

// Owner: adds a webhook endpoint (a receiver in this test process; the e2e server allows private addresses),
// copies its secret shown once, sends a test event that the receiver verifies with it, and sees the delivery
// and its attempt; then disables and deletes the endpoint.

test("the owner adds a webhook endpoint and sees a signed delivery", async ({ page }) => {
  const state = readState();
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/rhinarium`;
  try {
    await signIn(page, state.users.ownerA);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await expect(page).toHaveURL(/\/dashboard\/webhooks/);

    await page.getByLabel("Endpoint URL").fill("ftp://clinic.example/");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect(page.getByText("must start with https://")).toBeVisible();

    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect(page.getByText("Endpoint added.")).toBeVisible();
    const secret = (await page.getByTestId("new-webhook-secret-value").textContent())!;
    expect(secret).toMatch(/^whsec_/);
    const row = page.getByTestId("webhook-endpoint-row").filter({ hasText: url });
    await expect(row).toHaveAttribute("data-enabled", "true");

    await row.getByRole("button", { name: "Send test" }).click();
    await expect(page.getByText(/Test event queued/)).toBeVisible();
    await expect.poll(() => received.length, { timeout: 15_000 }).toBe(1);
    const [got] = received;
    const headers = { "webhook-id": String(got.headers["webhook-id"]), "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": String(got.headers["webhook-signature"]) };
    expect(new Webhook(secret).verify(got.body, headers)).toMatchObject({ type: "webhook.test" });

    // The delivery and its attempt; the secret is not on the page any more.
    await expect(async () => {
      await page.reload();
      await expect(page.getByTestId("webhook-delivery-row").first()).toHaveAttribute("data-status", "SUCCEEDED", { timeout: 1000 });
    }).toPass({ timeout: 15_000 });
    await expect(page.getByTestId("webhook-attempts").first()).toContainText("204");
    await expect(page.locator("body")).not.toContainText(secret);
    await screenshot(page, "webhooks");

    await row.getByRole("button", { name: "Disable" }).click();
    await expect(page.getByText("Endpoint disabled.")).toBeVisible();
    await expect(row).toHaveAttribute("data-enabled", "false");
    await row.getByRole("button", { name: "Delete" }).click();
    await page.getByTestId("confirm-dialog").getByRole("button", { name: "Delete endpoint" }).click();
    await expect(page.getByText("Endpoint deleted.")).toBeVisible();
    await expect(page.getByTestId("webhook-endpoint-row")).toHaveCount(0);
  } finally {
    receiver.close();
  }
});
