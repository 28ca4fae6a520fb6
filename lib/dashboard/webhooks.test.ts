import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/lib/auth/session";
import type { OpenDatabase } from "@/lib/db/connect";
import { openTestDatabase } from "@/lab/test-support/database";
import { recordTestEvent } from "@/lib/webhooks/events";
import { invokeAction, type DashboardAction } from "./action-client";
import {
  addWebhookEndpointAction,
  deleteWebhookEndpointAction,
  getJobWebhookDeliveries,
  getWebhooksPage,
  rotateWebhookSecretAction,
  sendWebhookTestAction,
  setWebhookEndpointEnabledAction,
} from "./webhooks";

// The owner's webhook actions: only the owner role may use them, each is scoped to the session's account (another
// account's endpoint is unknown and stays as it was), the secret is answered once and never audited.

describe("dashboard webhooks", () => {
  let open: OpenDatabase;
  let close: () => Promise<void>;
  const saved = { ...process.env };

  beforeAll(async () => {
    process.env.WEBHOOKS_ALLOW_PRIVATE = "1";
    process.env.WEBHOOK_SECRET_KEY = "dashboard-webhooks-test-key";
    ({ open, close } = await openTestDatabase("pglite", "dashboard_webhooks"));
  });

  afterAll(async () => {
    process.env = saved;
    await close?.();
  });

  async function tenant(name: string) {
    const db = open.prisma;
    const account = await db.account.create({ data: { name } });
    const user = async (role: "owner" | "staff") => {
      const row = await db.user.create({ data: { email: `${role}@${name}.test`, passwordHash: "x", role, accountId: account.id } });
      return { id: row.id, email: row.email, role: row.role, accountId: account.id } satisfies SessionUser;
    };
    return { accountId: account.id, owner: await user("owner"), staff: await user("staff") };
  }

  const act = (action: unknown, user: SessionUser, input: unknown) =>
    invokeAction(action as DashboardAction<never, unknown>, open.prisma, user, input) as Promise<{ ok: boolean; data?: unknown; error?: { message: string; fields?: Record<string, string[]> } }>;

  it("lets the owner add an endpoint (secret answered once, not audited) and refuses other roles and bad URLs", async () => {
    const a = await tenant("hooks-a");
    const added = await act(addWebhookEndpointAction, a.owner, { url: "http://127.0.0.1:9/hook" });
    expect(added.ok).toBe(true);
    const { secret, endpointId } = added.data as { secret: string; endpointId: string };
    expect(secret).toMatch(/^whsec_/);
    const audit = await open.prisma.auditLog.findMany({ where: { accountId: a.accountId } });
    expect(audit.map((r) => r.action)).toEqual(["webhook.add"]);
    expect(JSON.stringify(audit)).not.toContain(secret.slice(6));
    const page = await getWebhooksPage(open.prisma, a.accountId);
    expect(page.endpoints).toEqual([expect.objectContaining({ id: endpointId, url: "http://127.0.0.1:9/hook", enabled: true })]);
    expect(JSON.stringify(page)).not.toContain(secret.slice(6));
    expect((await act(addWebhookEndpointAction, a.staff, { url: "http://127.0.0.1:9/other" })).error?.message).toMatch(/not allowed/);
    const bad = await act(addWebhookEndpointAction, a.owner, { url: "ftp://clinic.example/" });
    expect(bad.ok).toBe(false);
    expect(bad.error?.fields?.url?.[0]).toMatch(/https/);
  });

  it("answers another account's endpoint as unknown, for every action and listing, and leaves it as it was", async () => {
    const a = await tenant("hooks-c");
    const b = await tenant("hooks-d");
    const theirs = (await act(addWebhookEndpointAction, b.owner, { url: "http://127.0.0.1:9/b" })).data as { endpointId: string };
    expect(await recordTestEvent(open.prisma, b.accountId, theirs.endpointId)).toBe(true);
    for (const [action, input] of [
      [setWebhookEndpointEnabledAction, { endpointId: theirs.endpointId, enabled: false }],
      [rotateWebhookSecretAction, { endpointId: theirs.endpointId }],
      [sendWebhookTestAction, { endpointId: theirs.endpointId }],
      [deleteWebhookEndpointAction, { endpointId: theirs.endpointId }],
    ] as const) {
      const result = await act(action, a.owner, input);
      expect(result.ok).toBe(false);
      expect(result.error?.message).toMatch(/does not exist/);
    }
    const pageA = await getWebhooksPage(open.prisma, a.accountId);
    expect(pageA.endpoints).toHaveLength(0);
    expect(pageA.deliveries).toHaveLength(0);
    const pageB = await getWebhooksPage(open.prisma, b.accountId);
    expect(pageB.endpoints).toEqual([expect.objectContaining({ id: theirs.endpointId, enabled: true })]);
    expect(pageB.deliveries).toHaveLength(1);
    // The owner's own actions work on the same ids.
    expect((await act(setWebhookEndpointEnabledAction, b.owner, { endpointId: theirs.endpointId, enabled: false })).ok).toBe(true);
    expect((await act(rotateWebhookSecretAction, b.owner, { endpointId: theirs.endpointId })).data).toMatchObject({ secret: expect.stringMatching(/^whsec_/) });
    expect((await act(deleteWebhookEndpointAction, b.owner, { endpointId: theirs.endpointId })).ok).toBe(true);
    expect((await open.prisma.auditLog.findMany({ where: { accountId: b.accountId }, orderBy: { createdAt: "asc" } })).map((r) => r.action)).toEqual([
      "webhook.add",
      "webhook.disable",
      "webhook.rotate-secret",
      "webhook.delete",
    ]);
  });

  it("lists a job's deliveries for its own account only", async () => {
    const b = await tenant("hooks-e");
    const a = await tenant("hooks-f");
    const endpoint = (await act(addWebhookEndpointAction, b.owner, { url: "http://127.0.0.1:9/job" })).data as { endpointId: string };
    await open.prisma.webhookDelivery.create({
      data: { accountId: b.accountId, endpointId: endpoint.endpointId, eventId: "msg_x", eventType: "job.failed", jobId: "job-of-b", payload: "{}" },
    });
    expect(await getJobWebhookDeliveries(open.prisma, b.accountId, "job-of-b")).toHaveLength(1);
    expect(await getJobWebhookDeliveries(open.prisma, a.accountId, "job-of-b")).toHaveLength(0);
  });
});
