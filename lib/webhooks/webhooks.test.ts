import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OpenDatabase } from "@/lib/db/connect";
import { DomainError } from "@/lib/domain-errors";
import { abandonJob } from "@/lib/jobs/job-queue";
import { runJob } from "@/lib/jobs/run-job";
import { openTestDatabase } from "@/lab/test-support/database";
import { isPrivateAddress } from "./address-guard";
import { CLAIM_LEASE_MS, DELIVERY_RETENTION_MS, MAX_DELIVERY_ATTEMPTS, RETRY_JITTER, RETRY_SCHEDULE_MS, WebhookDispatcher, type DispatcherOptions } from "./dispatcher";
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookDeliveries, listWebhookEndpoints, MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT, rotateWebhookSecret, setWebhookEndpointEnabled, type EndpointSettings } from "./endpoints";
import { recordJobEnd, recordTestEvent } from "./events";
import { openSecret, sealSecret, SecretKeyMismatch, webhookKey } from "./secret-box";
import { postWebhook, type WebhookSender } from "./send";

// Webhooks end to end below the HTTP layer, in both database modes: a job's end written to the outbox in its
// transaction, signed deliveries a Standard Webhooks receiver verifies, retries on the schedule with an injected
// clock, one slow receiver not holding the others, the SSRF guard, tenant scoping, and a claimed row that a
// crashed process left picked up by a new dispatcher.

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local receiver: /ok answers 204, /fail 500, /redirect 302, /slow never answers. */
async function startReceiver() {
  const received: Received[] = [];
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body });
      if (req.url === "/ok") res.writeHead(204).end();
      else if (req.url === "/fail") res.writeHead(500).end("nope");
      else if (req.url === "/redirect") res.writeHead(302, { location: "/ok" }).end();
      else hanging.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("webhook address guard", () => {
  it("tells public addresses from loopback, private, link-local and mapped ones", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "not-an-ip"]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"]) expect(isPrivateAddress(a), a).toBe(false);
  });

  it("refuses to POST to a non-public address unless allowed, by literal and by name", async () => {
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.base).port;
      const options = { timeoutMs: 2000, allowPrivate: false };
      const literal = await postWebhook(`${receiver.base}/ok`, {}, "{}", options);
      expect(literal.statusCode).toBeUndefined();
      expect(literal.error).toMatch(/non-public address 127\.0\.0\.1/);
      const named = await postWebhook(`http://localhost:${port}/ok`, {}, "{}", options);
      expect(named.statusCode).toBeUndefined();
      expect(named.error).toMatch(/non-public address/);
      expect(receiver.received).toHaveLength(0);
      expect((await postWebhook(`http://localhost:${port}/ok`, {}, "{}", { timeoutMs: 2000, allowPrivate: true })).statusCode).toBe(204);
      // A redirect is an answer, not followed.
      expect((await postWebhook(`${receiver.base}/redirect`, {}, "{}", { timeoutMs: 2000, allowPrivate: true })).statusCode).toBe(302);
      expect(receiver.received.map((r) => r.path)).toEqual(["/ok", "/redirect"]);
    } finally {
      await receiver.close();
    }
  });
});

describe("webhook secrets", () => {
  it("are sealed under the server key and refused under another", () => {
    const key = webhookKey({ WEBHOOK_SECRET_KEY: "a-test-key-of-enough-length" } as never);
    const sealed = sealSecret("whsec_abc", key);
    expect(sealed).not.toContain("abc");
    expect(openSecret(sealed, key)).toBe("whsec_abc");
    expect(() => openSecret(sealed, webhookKey({ WEBHOOK_SECRET_KEY: "another-key-of-enough-length" } as never))).toThrow(SecretKeyMismatch);
  });
});

describe.each(["pglite", "postgres"] as const)("webhooks (%s)", (mode) => {
  let open: OpenDatabase;
  let close: () => Promise<void>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const key = webhookKey({ WEBHOOK_SECRET_KEY: "the-webhook-test-key" } as never);
  const allowed: EndpointSettings = { allowPrivate: true, key };
  const db = () => open.prisma;

  beforeAll(async () => {
    ({ open, close } = await openTestDatabase(mode, "webhooks"));
    receiver = await startReceiver();
  });

  afterAll(async () => {
    await receiver?.close();
    await close?.();
  });

  let accounts = 0;
  async function account() {
    return db().account.create({ data: { name: `hooks-${accounts++}` } });
  }

  /** A PENDING verification job of the account, with an empty finished session. */
  async function pendingJob(accountId: string) {
    const pet = await db().pet.create({ data: { accountId, species: "DOG" } });
    const session = await db().captureSession.create({
      data: { accountId, species: "DOG", purpose: "PET_VERIFICATION", petId: pet.id, expiresAt: new Date(Date.now() + 3_600_000), usedAt: new Date() },
    });
    return db().job.create({ data: { accountId, kind: "VERIFICATION", petId: pet.id, sessionId: session.id } });
  }

  // The dispatcher sends every account's due deliveries: each case sees only its own endpoints enabled, and
  // closes its dispatchers.
  const dispatchers: WebhookDispatcher[] = [];
  beforeEach(async () => {
    await db().webhookEndpoint.updateMany({ data: { enabled: false } });
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.close()));
  });

  function dispatcher(options: Partial<DispatcherOptions> = {}) {
    const d = new WebhookDispatcher(db(), { key, allowPrivate: true, timeoutMs: 2000, ...options });
    dispatchers.push(d);
    return d;
  }

  it("writes one delivery per enabled endpoint when a job ends, once, with the job's GET view", async () => {
    const a = await account();
    const one = await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok`, allowed);
    const two = await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok?second`, allowed);
    const off = await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok?off`, allowed);
    await setWebhookEndpointEnabled(db(), a.id, off.id, false);
    const job = await pendingJob(a.id);
    // No usable image in the session: the job fails, through the runner's own ending.
    await runJob(db(), job.id);
    await runJob(db(), job.id); // a second run of an ended job changes nothing
    await abandonJob(db(), job.id); // nor does abandoning it
    const rows = await db().webhookDelivery.findMany({ where: { jobId: job.id } });
    expect(rows.map((r) => r.endpointId).sort()).toEqual([one.id, two.id].sort());
    expect(new Set(rows.map((r) => r.eventId)).size).toBe(1);
    const payload = JSON.parse(rows[0].payload);
    expect(payload).toMatchObject({
      type: "job.failed",
      data: { jobId: job.id, kind: "VERIFICATION", status: "FAILED", path: `/v2/verification-jobs/${job.id}`, view: { status: "FAILED" } },
    });
    expect(JSON.stringify(payload)).not.toContain("INSUFFICIENT_USABLE_IMAGES"); // the reason stays internal, as on GET
  });

  it("writes the delivery in the job's transaction: rolled back with it, and an abandoned job is told too", async () => {
    const a = await account();
    await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok`, allowed);
    const job = await pendingJob(a.id);
    await db()
      .$transaction(async (tx) => {
        await tx.job.update({ where: { id: job.id }, data: { status: "SUCCESS", result: { isVerified: true, score: 62 }, finishedAt: new Date() } });
        expect(await recordJobEnd(tx, job)).toBe(1);
        throw new Error("the job's transaction fails after the outbox write");
      })
      .catch(() => undefined);
    expect(await db().webhookDelivery.count({ where: { jobId: job.id } })).toBe(0);
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("PENDING");
    await db().$transaction(async (tx) => {
      await tx.job.update({ where: { id: job.id }, data: { status: "SUCCESS", result: { isVerified: true, score: 62 }, finishedAt: new Date() } });
      await recordJobEnd(tx, job);
    });
    const [row] = await db().webhookDelivery.findMany({ where: { jobId: job.id } });
    expect(JSON.parse(row.payload)).toMatchObject({ type: "job.succeeded", data: { view: { status: "SUCCESS", isVerified: true, score: 62 } } });
    const abandoned = await pendingJob(a.id);
    await abandonJob(db(), abandoned.id);
    expect(await db().webhookDelivery.count({ where: { jobId: abandoned.id, eventType: "job.failed" } })).toBe(1);
  });

  it("sends a Standard Webhooks signed POST that the receiver verifies with the endpoint's secret", async () => {
    const a = await account();
    const endpoint = await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok`, allowed);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(await db().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).not.toHaveProperty("secret");
    const job = await pendingJob(a.id);
    await abandonJob(db(), job.id);
    const before = receiver.received.length;
    await dispatcher().drain();
    const got = receiver.received.slice(before).find((r) => r.body.includes(job.id))!;
    const headers = { "webhook-id": String(got.headers["webhook-id"]), "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": String(got.headers["webhook-signature"]) };
    expect(headers["webhook-id"]).toMatch(/^msg_/);
    expect(headers["webhook-signature"]).toMatch(/^v1,/);
    expect(got.headers["content-type"]).toBe("application/json");
    expect(new Webhook(endpoint.secret).verify(got.body, headers)).toMatchObject({ type: "job.failed", data: { jobId: job.id } });
    // Another secret (a rotated one) does not verify it.
    const rotated = (await rotateWebhookSecret(db(), a.id, endpoint.id, allowed))!;
    expect(() => new Webhook(rotated).verify(got.body, headers)).toThrow();
    const [delivery] = await listWebhookDeliveries(db(), a.id, { jobId: job.id });
    expect(delivery).toMatchObject({ status: "SUCCEEDED", attempts: 1 });
    expect(delivery.attemptLog).toEqual([expect.objectContaining({ statusCode: 204, error: null })]);
  });

  it("retries on the schedule (with jitter) and fails the delivery after the last attempt", async () => {
    const a = await account();
    const endpoint = await createWebhookEndpoint(db(), a.id, `${receiver.base}/fail`, allowed);
    let now = new Date(Date.now() + 1000);
    const sends: Date[] = [];
    const failing: WebhookSender = async () => {
      sends.push(now);
      return { statusCode: 500, durationMs: 1 };
    };
    const d = dispatcher({ clock: () => now, random: () => 0.5, send: failing });
    expect(await recordTestEvent(db(), a.id, endpoint.id, now)).toBe(true);
    const [{ id }] = await db().webhookDelivery.findMany({ where: { endpointId: endpoint.id } });
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt++) {
      await d.drain();
      const row = await db().webhookDelivery.findUniqueOrThrow({ where: { id } });
      expect(row.attempts).toBe(attempt);
      if (attempt === MAX_DELIVERY_ATTEMPTS) {
        expect(row.status).toBe("FAILED");
        break;
      }
      expect(row.status).toBe("PENDING");
      const wait = row.nextAttemptAt.getTime() - now.getTime();
      expect(wait).toBe(Math.round(RETRY_SCHEDULE_MS[attempt] * (1 + RETRY_JITTER * 0.5)));
      // Not a moment early.
      now = new Date(row.nextAttemptAt.getTime() - 1);
      await d.drain();
      expect((await db().webhookDelivery.findUniqueOrThrow({ where: { id } })).attempts).toBe(attempt);
      now = row.nextAttemptAt;
    }
    expect(sends).toHaveLength(MAX_DELIVERY_ATTEMPTS);
    await d.drain();
    expect(sends).toHaveLength(MAX_DELIVERY_ATTEMPTS);
    expect(await db().webhookAttempt.count({ where: { deliveryId: id, statusCode: 500 } })).toBe(MAX_DELIVERY_ATTEMPTS);
  });

  it("does not let a receiver that never answers, or answers 500, hold the others", async () => {
    const a = await account();
    const slow = await createWebhookEndpoint(db(), a.id, `${receiver.base}/slow`, allowed);
    const failing = await createWebhookEndpoint(db(), a.id, `${receiver.base}/fail`, allowed);
    const ok = await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok`, allowed);
    // Several events to the slow one first: it may take one slot, never more.
    for (let i = 0; i < 3; i++) await recordTestEvent(db(), a.id, slow.id);
    await recordTestEvent(db(), a.id, failing.id);
    await recordTestEvent(db(), a.id, ok.id);
    const d = dispatcher({ timeoutMs: 5000, concurrency: 2 });
    d.wake();
    // The others are done while the slow one still waits for its answer (no attempt of it recorded yet).
    await expect.poll(async () => (await listWebhookDeliveries(db(), a.id, { endpointId: ok.id }))[0].status, { timeout: 4000, interval: 50 }).toBe("SUCCEEDED");
    const [failed] = await listWebhookDeliveries(db(), a.id, { endpointId: failing.id });
    expect(failed).toMatchObject({ status: "PENDING", attempts: 1 });
    expect(failed.attemptLog[0].statusCode).toBe(500);
    expect((await listWebhookDeliveries(db(), a.id, { endpointId: slow.id })).filter((r) => r.attempts > 0)).toHaveLength(0);
    await d.close();
    const slowRows = await listWebhookDeliveries(db(), a.id, { endpointId: slow.id });
    expect(slowRows.filter((r) => r.attempts === 1)).toHaveLength(1);
    expect(slowRows.find((r) => r.attempts === 1)!.attemptLog[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/no response within 5 s/) });
  });

  it("leaves a row claimed by a process that died due again after the lease, for a new dispatcher", async () => {
    const a = await account();
    const endpoint = await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok`, allowed);
    const now = new Date(Date.now() + 1000);
    await recordTestEvent(db(), a.id, endpoint.id, now);
    const sent: string[] = [];
    const recording: WebhookSender = async (url) => {
      sent.push(url);
      return { statusCode: 200, durationMs: 1 };
    };
    // The first process claims it and dies before sending.
    const crashed = dispatcher({ clock: () => now });
    expect((await crashed.claim()).map((c) => c.endpointId)).toContain(endpoint.id);
    const restarted = dispatcher({ clock: () => new Date(now.getTime() + CLAIM_LEASE_MS - 1), send: recording });
    await restarted.drain();
    expect(sent).toHaveLength(0);
    const later = dispatcher({ clock: () => new Date(now.getTime() + CLAIM_LEASE_MS), send: recording });
    await later.drain();
    expect(sent).toEqual([`${receiver.base}/ok`]);
    expect((await listWebhookDeliveries(db(), a.id, { endpointId: endpoint.id }))[0]).toMatchObject({ status: "SUCCEEDED", attempts: 1 });
  });

  it("removes ended deliveries after the retention, never pending ones", async () => {
    const a = await account();
    const endpoint = await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok`, allowed);
    await recordTestEvent(db(), a.id, endpoint.id);
    await recordTestEvent(db(), a.id, endpoint.id);
    await dispatcher().drain();
    await recordTestEvent(db(), a.id, endpoint.id, new Date(Date.now() + 3_600_000)); // not yet due: stays PENDING
    expect(await dispatcher().sweep()).toBe(0);
    const later = dispatcher({ clock: () => new Date(Date.now() + DELIVERY_RETENTION_MS + 60_000) });
    expect(await later.sweep()).toBeGreaterThanOrEqual(2);
    expect((await listWebhookDeliveries(db(), a.id, { endpointId: endpoint.id })).map((d) => d.status)).toEqual(["PENDING"]);
  });

  it("records an attempt that cannot be signed (another process's key) without sending it", async () => {
    const a = await account();
    const endpoint = await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok`, allowed);
    await recordTestEvent(db(), a.id, endpoint.id);
    const sent: string[] = [];
    await dispatcher({ key: webhookKey({ WEBHOOK_SECRET_KEY: "some-other-process-key" } as never), send: async (url) => (sent.push(url), { statusCode: 200, durationMs: 0 }) }).drain();
    expect(sent).toHaveLength(0);
    const [row] = await listWebhookDeliveries(db(), a.id, { endpointId: endpoint.id });
    expect(row).toMatchObject({ status: "PENDING", attempts: 1 });
    expect(row.attemptLog[0].error).toMatch(/WEBHOOK_SECRET_KEY/);
  });

  it("refuses endpoints that are not https or resolve to private addresses when that is not allowed", async () => {
    const a = await account();
    const refused = { allowPrivate: false, key };
    for (const url of ["http://clinic.example/hook", "https://127.0.0.1/hook", "https://localhost/hook", "https://[::1]/hook", "https://169.254.169.254/latest", "https://user:pw@clinic.example/", "not a url"]) {
      const error = await createWebhookEndpoint(db(), a.id, url, refused).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(DomainError);
      expect(Object.keys((error as DomainError).details ?? {}), url).toEqual(["url"]);
    }
    expect(await listWebhookEndpoints(db(), a.id)).toHaveLength(0);
  });

  it(`holds an account to ${MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT} endpoints when adds race`, async () => {
    const a = await account();
    const adds = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => createWebhookEndpoint(db(), a.id, `${receiver.base}/ok?race=${i}`, allowed)));
    expect(adds.filter((add) => add.status === "fulfilled")).toHaveLength(MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT);
    for (const add of adds) if (add.status === "rejected") expect(add.reason).toBeInstanceOf(DomainError);
    expect(await listWebhookEndpoints(db(), a.id)).toHaveLength(MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT);
  });

  it("keeps each account's endpoints and deliveries to itself", async () => {
    const a = await account();
    const b = await account();
    const theirs = await createWebhookEndpoint(db(), b.id, `${receiver.base}/ok`, allowed);
    await recordTestEvent(db(), b.id, theirs.id);
    expect(await setWebhookEndpointEnabled(db(), a.id, theirs.id, false)).toBe(false);
    expect(await rotateWebhookSecret(db(), a.id, theirs.id, allowed)).toBeNull();
    expect(await recordTestEvent(db(), a.id, theirs.id)).toBe(false);
    expect(await deleteWebhookEndpoint(db(), a.id, theirs.id)).toBeNull();
    expect(await listWebhookEndpoints(db(), a.id)).toHaveLength(0);
    expect(await listWebhookDeliveries(db(), a.id, { endpointId: theirs.id })).toHaveLength(0);
    // B's endpoint is as it was, and B's job end does not reach A.
    expect(await db().webhookEndpoint.findUniqueOrThrow({ where: { id: theirs.id } })).toMatchObject({ enabled: true });
    await createWebhookEndpoint(db(), a.id, `${receiver.base}/ok?a`, allowed);
    const job = await pendingJob(b.id);
    await abandonJob(db(), job.id);
    expect((await db().webhookDelivery.findMany({ where: { jobId: job.id } })).map((r) => r.accountId)).toEqual([b.id]);
  });
});
