import { Webhook } from "standardwebhooks";
import type { Db } from "@/lib/db/connect";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import type { Env } from "@/lib/env";
import { logError, logInfo } from "@/lib/log";
import { metrics } from "@/lib/metrics";
import { processSlot } from "@/lib/process-state";
import { openSecret, SecretKeyMismatch, webhookKey } from "./secret-box";
import { postWebhook, WEBHOOK_TIMEOUT_MS, type WebhookSender } from "./send";

/**
 * When each attempt is due after the previous one failed (Standard Webhooks' schedule): at once, 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h. After the last, the delivery is FAILED (about 27.6 hours after the event).
 */
export const RETRY_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const MAX_DELIVERY_ATTEMPTS = RETRY_SCHEDULE_MS.length;

/** Each wait is stretched by up to this share at random, so that retries to one receiver do not come in waves. */
export const RETRY_JITTER = 0.2;

/** The wait after the `attempts`-th failed attempt (from 1), or null when none is left. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number | null {
  if (attempts >= MAX_DELIVERY_ATTEMPTS) return null;
  return Math.round(RETRY_SCHEDULE_MS[attempts] * (1 + RETRY_JITTER * random()));
}

/**
 * A claimed delivery is the sender's for this long (its `nextAttemptAt` moves this far ahead): a process that
 * dies mid-attempt leaves it due again then, for any dispatcher. Far longer than an attempt can take.
 */
export const CLAIM_LEASE_MS = 60_000;

/** Ended deliveries (with their attempts) are kept this long for the dashboard, then removed (hourly). */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;
const SWEEP_MS = 3600_000;

export interface DispatcherOptions {
  /** The webhook key that decrypts the signing secrets (secret-box.ts). */
  key: Buffer;
  allowPrivate: boolean;
  /** Deliveries in flight at once in this process, never two to one endpoint. */
  concurrency?: number;
  pollMs?: number;
  timeoutMs?: number;
  clock?: () => Date;
  random?: () => number;
  send?: WebhookSender;
}

interface Claimed {
  id: string;
  endpointId: string;
}

/**
 * Sends due deliveries of the outbox (any account's) from the process that runs jobs: the embedded server, or
 * each `npm run worker`. Deliveries are claimed in a short transaction (PostgreSQL: `FOR UPDATE SKIP LOCKED`,
 * so several workers never take the same row; PGlite: this process owns the database) and sent outside it,
 * at most `concurrency` at once and one per endpoint, each ending within the timeout: a slow or failing
 * receiver holds one slot, never the others, and never the event loop (the sends are plain async sockets).
 */
export class WebhookDispatcher {
  private readonly inFlight = new Map<string, { endpointId: string; done: Promise<void> }>();
  private readonly concurrency: number;
  private readonly clock: () => Date;
  private readonly random: () => number;
  private readonly send: WebhookSender;
  private timer: NodeJS.Timeout | undefined;
  private sweeps: NodeJS.Timeout | undefined;
  /** Claims run one after another: the last one queued. */
  private chain: Promise<unknown> = Promise.resolve();
  private queued = false;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly options: DispatcherOptions,
  ) {
    this.concurrency = options.concurrency ?? 8;
    this.clock = options.clock ?? (() => new Date());
    this.random = options.random ?? Math.random;
    this.send = options.send ?? postWebhook;
  }

  /** Looks for due deliveries every `pollMs` (default 1 s), and at once when woken. */
  start(): this {
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 1000);
    this.timer.unref();
    this.sweeps = setInterval(() => void this.sweep().catch((error) => isDatabaseUnavailable(error) || logError("webhook-sweep-failed", error)), SWEEP_MS);
    this.sweeps.unref();
    return this;
  }

  /** Removes the deliveries that ended more than DELIVERY_RETENTION_MS ago; answers how many. */
  async sweep(): Promise<number> {
    const before = new Date(this.clock().getTime() - DELIVERY_RETENTION_MS);
    const { count } = await this.db.webhookDelivery.deleteMany({ where: { status: { in: ["SUCCEEDED", "FAILED"] }, updatedAt: { lt: before } } });
    return count;
  }

  /** Claims what is due and free slots allow, and starts sending it (not awaited). */
  wake(): void {
    if (this.closed || this.queued) return;
    this.queued = true;
    void this.tick().catch(() => undefined);
  }

  /** One claim, after the ones before it: how many deliveries it started. */
  private tick(): Promise<number> {
    const run = this.chain.then(() => {
      this.queued = false;
      return this.closed ? 0 : this.claimAndSend();
    });
    this.chain = run.catch((error) => {
      if (!isDatabaseUnavailable(error)) logError("webhook-dispatch-failed", error);
    });
    return run;
  }

  /** Until nothing due is left or in flight (tests, with an injected clock). */
  async drain(): Promise<void> {
    for (;;) {
      const started = await this.tick();
      if (started === 0 && this.inFlight.size === 0) return;
      await Promise.all([...this.inFlight.values()].map((f) => f.done));
    }
  }

  /** Stops claiming; waits for the attempts in flight (each ends within the timeout). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.sweeps);
    await this.chain;
    await Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
  }

  /** The rows this process claims now: due, of an enabled endpoint not already being sent to from here. */
  async claim(): Promise<Claimed[]> {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return [];
    const now = this.clock();
    const busy = new Set([...this.inFlight.values()].map((f) => f.endpointId));
    return this.db.$transaction(async (tx) => {
      const due = await tx.$queryRaw<Claimed[]>`
        SELECT d.id, d."endpointId" FROM "WebhookDelivery" d
        JOIN "WebhookEndpoint" e ON e.id = d."endpointId" AND e.enabled
        WHERE d.status = 'PENDING' AND d."nextAttemptAt" <= ${now}
        ORDER BY d."nextAttemptAt" LIMIT ${free * 4}
        FOR UPDATE OF d SKIP LOCKED`;
      const picked: Claimed[] = [];
      for (const row of due) {
        if (picked.length === free || busy.has(row.endpointId)) continue;
        busy.add(row.endpointId);
        picked.push(row);
      }
      if (picked.length > 0) {
        await tx.webhookDelivery.updateMany({ where: { id: { in: picked.map((p) => p.id) } }, data: { nextAttemptAt: new Date(now.getTime() + CLAIM_LEASE_MS) } });
      }
      return picked;
    });
  }

  private async claimAndSend(): Promise<number> {
    const claimed = await this.claim();
    for (const row of claimed) {
      const done = this.attempt(row.id)
        .catch((error) => {
          // The row stays claimed; it is due again when the lease ends.
          if (!isDatabaseUnavailable(error)) logError("webhook-attempt-failed", error, { deliveryId: row.id });
        })
        .finally(() => {
          this.inFlight.delete(row.id);
          if (!this.closed) this.wake();
        });
      this.inFlight.set(row.id, { endpointId: row.endpointId, done });
    }
    return claimed.length;
  }

  /** One attempt of one claimed delivery, recorded with its outcome; the next attempt scheduled or the delivery ended. */
  private async attempt(deliveryId: string): Promise<void> {
    const delivery = await this.db.webhookDelivery.findUnique({ where: { id: deliveryId }, include: { endpoint: { select: { url: true, secretEncrypted: true } } } });
    if (!delivery || delivery.status !== "PENDING") return;
    const sentAt = this.clock();
    let outcome: { statusCode?: number; error?: string; durationMs: number };
    try {
      const secret = openSecret(delivery.endpoint.secretEncrypted, this.options.key);
      const signature = new Webhook(secret).sign(delivery.eventId, sentAt, delivery.payload);
      const headers = {
        "content-type": "application/json",
        "user-agent": "Rhinarium-Webhooks/1",
        "webhook-id": delivery.eventId,
        "webhook-timestamp": Math.floor(sentAt.getTime() / 1000).toString(),
        "webhook-signature": signature,
      };
      outcome = await this.send(delivery.endpoint.url, headers, delivery.payload, { timeoutMs: this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS, allowPrivate: this.options.allowPrivate });
    } catch (error) {
      if (!(error instanceof SecretKeyMismatch)) throw error;
      outcome = { error: error.message, durationMs: 0 };
    }
    const succeeded = outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const attempts = delivery.attempts + 1;
    const delay = succeeded ? null : retryDelayMs(attempts, this.random);
    const finishedAt = this.clock();
    await this.db.$transaction(async (tx) => {
      // A delivery deleted meanwhile (with its endpoint) has nothing left to record.
      const { count } = await tx.webhookDelivery.updateMany({
        where: { id: deliveryId, status: "PENDING" },
        data: succeeded
          ? { attempts, status: "SUCCEEDED" }
          : delay === null
            ? { attempts, status: "FAILED" }
            : { attempts, nextAttemptAt: new Date(finishedAt.getTime() + delay) },
      });
      if (count === 1) {
        await tx.webhookAttempt.create({ data: { deliveryId, at: sentAt, statusCode: outcome.statusCode ?? null, error: outcome.error ?? null, durationMs: outcome.durationMs } });
      }
    });
    metrics().webhookAttempts.inc({ outcome: succeeded ? "succeeded" : delay === null ? "failed" : "retrying" });
    if (!succeeded && delay === null) logInfo("webhook-delivery-failed", { deliveryId, endpointId: delivery.endpointId, attempts });
  }
}

// One dispatcher per process that runs jobs (lib/server/start.ts, lib/jobs/worker-process.ts).
const current = processSlot<WebhookDispatcher>("webhookDispatcher");

export function startWebhookDispatcher(db: Db, env: Env): WebhookDispatcher {
  const dispatcher = new WebhookDispatcher(db, { key: webhookKey(env), allowPrivate: env.WEBHOOKS_ALLOW_PRIVATE }).start();
  current.set(dispatcher);
  dispatcher.wake(); // what a stopped process left due
  return dispatcher;
}

export async function stopWebhookDispatcher(): Promise<void> {
  const dispatcher = current.get();
  current.set(undefined);
  await dispatcher?.close();
}

/** A job just ended in this process with deliveries to send: sooner than the next poll. */
export function wakeWebhookDispatcher(): void {
  current.get()?.wake();
}
