import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import { recordAudit } from "@/lib/accounts/audit";
import { MAX_DELIVERY_ATTEMPTS } from "@/lib/webhooks/dispatcher";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT,
  rotateWebhookSecret,
  setWebhookEndpointEnabled,
} from "@/lib/webhooks/endpoints";
import { recordTestEvent } from "@/lib/webhooks/events";
import { wakeWebhookDispatcher } from "@/lib/webhooks/dispatcher";
import { MAX_WEBHOOK_URL_LENGTH } from "@/lib/webhooks/address-guard";
import { accountAction, DashboardError, type AccountActionContext } from "./action-client";

// The owner's webhook endpoints and the deliveries sent to them (Webhooks page), and a job's deliveries (job page).
// The signing secret leaves the server twice only: in the answer to "add" and to "rotate", shown once.

type Deliveries = Awaited<ReturnType<typeof listWebhookDeliveries>>;

function deliveryRows(deliveries: Deliveries) {
  return deliveries.map((d) => ({
    id: d.id,
    endpointUrl: d.endpoint.url,
    eventId: d.eventId,
    eventType: d.eventType,
    jobId: d.jobId,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === "PENDING" ? d.nextAttemptAt.toISOString() : null,
    createdAt: d.createdAt.toISOString(),
    attemptLog: d.attemptLog.map((a) => ({ at: a.at.toISOString(), statusCode: a.statusCode, error: a.error, durationMs: a.durationMs })),
  }));
}

export type WebhookDeliveryRow = ReturnType<typeof deliveryRows>[number];

export async function getWebhooksPage(db: Db, accountId: string) {
  const [endpoints, deliveries] = await Promise.all([listWebhookEndpoints(db, accountId), listWebhookDeliveries(db, accountId)]);
  return {
    endpoints: endpoints.map((e) => ({ id: e.id, url: e.url, enabled: e.enabled, createdAt: e.createdAt.toISOString(), updatedAt: e.updatedAt.toISOString() })),
    deliveries: deliveryRows(deliveries),
    maxEndpoints: MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT,
    maxAttempts: MAX_DELIVERY_ATTEMPTS,
  };
}

/** The webhook deliveries of one job of the account (support's job page). */
export async function getJobWebhookDeliveries(db: Db, accountId: string, jobId: string) {
  return deliveryRows(await listWebhookDeliveries(db, accountId, { jobId }));
}

function audit(ctx: AccountActionContext, action: string, target: string, data: Record<string, string | boolean> = {}) {
  return recordAudit(ctx.db, { kind: "user", userId: ctx.user.id, email: ctx.user.email }, { action, accountId: ctx.accountId, target, data });
}

const endpointInput = z.object({ endpointId: z.string().min(1).max(100) });
const NOT_FOUND = "This endpoint does not exist.";

/** A new endpoint; its signing secret is answered once and never shown again. */
export const addWebhookEndpointAction = accountAction({
  capability: "account:manage",
  input: z.object({ url: z.string().trim().min(1, "required").max(MAX_WEBHOOK_URL_LENGTH, `at most ${MAX_WEBHOOK_URL_LENGTH} characters`) }),
  async run(ctx, input) {
    const endpoint = await createWebhookEndpoint(ctx.db, ctx.accountId, input.url);
    await audit(ctx, "webhook.add", endpoint.id, { url: endpoint.url });
    return { endpointId: endpoint.id, secret: endpoint.secret };
  },
});

export const setWebhookEndpointEnabledAction = accountAction({
  capability: "account:manage",
  input: endpointInput.extend({ enabled: z.boolean() }),
  async run(ctx, input) {
    if (!(await setWebhookEndpointEnabled(ctx.db, ctx.accountId, input.endpointId, input.enabled))) throw new DashboardError(NOT_FOUND);
    await audit(ctx, input.enabled ? "webhook.enable" : "webhook.disable", input.endpointId);
    if (input.enabled) wakeWebhookDispatcher();
    return { endpointId: input.endpointId, enabled: input.enabled };
  },
});

export const deleteWebhookEndpointAction = accountAction({
  capability: "account:manage",
  input: endpointInput,
  async run(ctx, input) {
    const deleted = await deleteWebhookEndpoint(ctx.db, ctx.accountId, input.endpointId);
    if (!deleted) throw new DashboardError(NOT_FOUND);
    await audit(ctx, "webhook.delete", input.endpointId, { url: deleted.url });
    return { endpointId: input.endpointId };
  },
});

/** A new signing secret, answered once; the old one stops signing at once. */
export const rotateWebhookSecretAction = accountAction({
  capability: "account:manage",
  input: endpointInput,
  async run(ctx, input) {
    const secret = await rotateWebhookSecret(ctx.db, ctx.accountId, input.endpointId);
    if (!secret) throw new DashboardError(NOT_FOUND);
    await audit(ctx, "webhook.rotate-secret", input.endpointId);
    return { endpointId: input.endpointId, secret };
  },
});

export const sendWebhookTestAction = accountAction({
  capability: "account:manage",
  input: endpointInput,
  async run(ctx, input) {
    if (!(await recordTestEvent(ctx.db, ctx.accountId, input.endpointId))) throw new DashboardError("This endpoint does not exist or is disabled.");
    wakeWebhookDispatcher();
    return { endpointId: input.endpointId };
  },
});
