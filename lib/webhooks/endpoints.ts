import type { Db } from "@/lib/db/connect";
import { invalidInput } from "@/lib/domain-errors";
import { readEnv } from "@/lib/env";
import { assertReachableHost, parseWebhookUrl } from "./address-guard";
import { newSigningSecret, sealSecret, webhookKey } from "./secret-box";

// An account's webhook endpoints. Every call is scoped by the account: another account's endpoint is simply
// unknown (null / false). The signing secret is returned by create and rotate only, once.

/** Endpoints an account may hold. */
export const MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT = 5;
/** First half of the advisory-lock key under which an account's endpoints are counted and added (the second: the account). */
const ENDPOINT_CAP_LOCK = 0x7e6b;

/** Deliveries the dashboard lists, newest first. */
export const RECENT_DELIVERIES = 50;

export interface EndpointSettings {
  allowPrivate: boolean;
  key: Buffer;
}

function settings(): EndpointSettings {
  const env = readEnv();
  return { allowPrivate: env.WEBHOOKS_ALLOW_PRIVATE, key: webhookKey(env) };
}

/** A new enabled endpoint (the URL checked: https, a host that resolves to public addresses) and its secret, shown once. */
export async function createWebhookEndpoint(db: Db, accountId: string, rawUrl: string, options: EndpointSettings = settings()) {
  const url = parseWebhookUrl(rawUrl, options.allowPrivate);
  await assertReachableHost(url, options.allowPrivate);
  const secret = newSigningSecret();
  // Counted and added under the account's lock: two adds at once cannot both see room for one more.
  const endpoint = await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ENDPOINT_CAP_LOCK}::int, hashtext(${accountId}))`;
    const count = await tx.webhookEndpoint.count({ where: { accountId } });
    if (count >= MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT) throw invalidInput("url", `at most ${MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT} endpoints an account: delete one first`);
    return tx.webhookEndpoint.create({ data: { accountId, url: url.href, secretEncrypted: sealSecret(secret, options.key) }, select: { id: true, url: true } });
  });
  return { ...endpoint, secret };
}

/** A new secret for the endpoint, shown once; the old one stops signing at once. Null when the endpoint is not the account's. */
export async function rotateWebhookSecret(db: Db, accountId: string, endpointId: string, options: EndpointSettings = settings()): Promise<string | null> {
  const secret = newSigningSecret();
  const { count } = await db.webhookEndpoint.updateMany({ where: { id: endpointId, accountId }, data: { secretEncrypted: sealSecret(secret, options.key) } });
  return count === 1 ? secret : null;
}

/** Disabled, it is sent nothing: new events skip it and its pending deliveries wait until it is enabled again. */
export async function setWebhookEndpointEnabled(db: Db, accountId: string, endpointId: string, enabled: boolean): Promise<boolean> {
  const { count } = await db.webhookEndpoint.updateMany({ where: { id: endpointId, accountId }, data: { enabled } });
  return count === 1;
}

/** The endpoint and its deliveries go. */
export async function deleteWebhookEndpoint(db: Db, accountId: string, endpointId: string): Promise<{ url: string } | null> {
  const endpoint = await db.webhookEndpoint.findFirst({ where: { id: endpointId, accountId }, select: { url: true } });
  if (!endpoint) return null;
  const { count } = await db.webhookEndpoint.deleteMany({ where: { id: endpointId, accountId } });
  return count === 1 ? endpoint : null;
}

export async function listWebhookEndpoints(db: Db, accountId: string) {
  return db.webhookEndpoint.findMany({
    where: { accountId },
    orderBy: { createdAt: "asc" },
    select: { id: true, url: true, enabled: true, createdAt: true, updatedAt: true },
  });
}

const deliverySelect = {
  id: true,
  endpointId: true,
  eventId: true,
  eventType: true,
  jobId: true,
  status: true,
  attempts: true,
  nextAttemptAt: true,
  createdAt: true,
  endpoint: { select: { url: true } },
  attemptLog: { orderBy: { at: "desc" as const }, select: { at: true, statusCode: true, error: true, durationMs: true } },
} as const;

/** The account's latest deliveries with their attempts, newest first; of one endpoint or one job when asked. */
export async function listWebhookDeliveries(db: Db, accountId: string, filter: { endpointId?: string; jobId?: string } = {}, take = RECENT_DELIVERIES) {
  return db.webhookDelivery.findMany({
    where: { accountId, ...(filter.endpointId ? { endpointId: filter.endpointId } : {}), ...(filter.jobId ? { jobId: filter.jobId } : {}) },
    orderBy: { createdAt: "desc" },
    take,
    select: deliverySelect,
  });
}
