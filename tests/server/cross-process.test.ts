import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEASE_MS } from "@/lib/db/notifications";
import { createTestDatabase, type TestDatabase } from "@/lab/test-support/scale";
import { API_SECURITY_HEADERS } from "@/lib/http/security-headers";
import { adminSql, buildOnce, ops, startServer, type TestServer } from "@/lab/test-support/server";
import { startTcpProxy } from "@/lab/test-support/tcp-proxy";

// Two web processes (what `npm start` runs) on one PostgreSQL database, as behind a load balancer.
// Each keeps authenticated API keys and pet views in memory (lib/accounts/api-key-cache.ts,
// lib/pets/pet-view-cache.ts, both lib/db/notified-cache.ts). What a client must be able to rely on
// whichever process answers:
// - read-your-writes: once a PATCH or DELETE is acknowledged, or a fingerprint addition is seen as
//   SUCCESS, the next GET through any process sees it, even when the other process's listening
//   connection has gone quiet (process b reaches PostgreSQL through a proxy that can hold it);
// - a change written by any other process or tool (SQL here, as a job worker or the ops CLI would)
//   reaches both processes' caches by notification;
// - a key deactivated, an account suspended or its plan changed by any process or tool (here the ops
//   CLI, its own process) is in force from the next call on, in every process;
// - a process that loses its notification connection stops trusting its caches until it listens again.

let database: TestDatabase;
let a: TestServer;
let b: TestServer;
/** Between process b and PostgreSQL. */
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;

const LISTENERS_SQL = (name: string) => `SELECT pid FROM pg_stat_activity WHERE datname = '${name}' AND application_name LIKE 'rhinarium-cache:%'`;

async function call(server: TestServer, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(server.baseUrl + path, {
    method,
    headers: { "x-service-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as { data?: Record<string, unknown>; errors?: { code: string }[] }) : undefined };
}

async function newAccount(name: string, plan = "standard"): Promise<{ accountId: string; apiKey: string }> {
  return (await ops(a.env, "account:create", "--name", name, "--plan", plan)) as { accountId: string; apiKey: string };
}

/** Both processes have served the key (so both hold it in their caches). */
async function warm(key: string): Promise<void> {
  for (const server of [a, b, a, b]) expect((await call(server, key, "GET", "/v2/pets")).status).toBe(200);
}

async function newPet(key: string, v: number): Promise<string> {
  const created = await call(a, key, "POST", "/v2/pets", { species: "DOG", metadata: JSON.stringify({ v }) });
  expect(created.status).toBe(201);
  return created.body!.data!.id as string;
}

async function metadataVia(server: TestServer, key: string, petId: string): Promise<unknown> {
  const read = await call(server, key, "GET", `/v2/pets/${petId}`);
  expect(read.status).toBe(200);
  return read.body!.data!.metadata;
}

/** Both processes have served the pet (so both hold its view in memory). */
async function warmPet(key: string, petId: string): Promise<void> {
  for (const server of [a, b, a, b]) expect((await call(server, key, "GET", `/v2/pets/${petId}`)).status).toBe(200);
}

async function expectEventually(condition: () => Promise<boolean>, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("not seen in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function listenerCount(): Promise<number> {
  return (await adminSql(LISTENERS_SQL(databaseName()), database.url)).length;
}

function databaseName(): string {
  return new URL(database.url).pathname.slice(1);
}

beforeAll(async () => {
  await buildOnce();
  database = await createTestDatabase("xproc");
  proxy = await startTcpProxy(Number(new URL(database.url).port || 5432));
  const viaProxy = new URL(database.url);
  viaProxy.port = String(proxy.port);
  a = await startServer({ databaseUrl: database.url });
  b = await startServer({ databaseUrl: viaProxy.toString() });
  // Both listen before the tests rely on their caches.
  for (let i = 0; i < 100 && (await listenerCount()) < 2; i++) await new Promise((r) => setTimeout(r, 100));
}, 600_000);

afterAll(async () => {
  for (const server of [a, b]) {
    if (!server) continue;
    await server.stop();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
  await proxy?.close();
  await database?.drop();
});

describe("two web processes on one PostgreSQL database", () => {
  it("a PATCH or DELETE acknowledged by one process is seen by the next GET through the other", async () => {
    const { apiKey } = await newAccount("Read your writes");
    const petId = await newPet(apiKey, 0);
    for (let v = 1; v <= 30; v++) {
      const [writer, reader] = v % 2 ? [a, b] : [b, a];
      expect(await metadataVia(reader, apiKey, petId)).toBe(JSON.stringify({ v: v - 1 })); // now in the reader's memory
      expect((await call(writer, apiKey, "PATCH", `/v2/pets/${petId}`, { metadata: JSON.stringify({ v }) })).status).toBe(200);
      expect(await metadataVia(reader, apiKey, petId)).toBe(JSON.stringify({ v }));
    }
    await warmPet(apiKey, petId);
    expect((await call(a, apiKey, "DELETE", `/v2/pets/${petId}`)).status).toBe(204);
    for (const server of [b, a]) {
      const gone = await call(server, apiKey, "GET", `/v2/pets/${petId}`);
      expect(gone.status).toBe(404);
      expect(gone.body!.errors![0].code).toBe("SERVICEB2B20000");
    }
  });

  it("a write waits out a process whose listening connection went quiet, and that process stops answering from memory", async () => {
    const { apiKey } = await newAccount("Quiet listener");
    const petId = await newPet(apiKey, 0);
    for (let v = 1; v <= 3; v++) {
      await warmPet(apiKey, petId);
      const release = proxy.holdReplies("rhinarium-cache:"); // b hears no notification, ping or ack from now on
      try {
        const started = performance.now();
        expect((await call(a, apiKey, "PATCH", `/v2/pets/${petId}`, { metadata: JSON.stringify({ v }) })).status).toBe(200);
        const patchMs = performance.now() - started;
        expect(await metadataVia(b, apiKey, petId)).toBe(JSON.stringify({ v })); // b reads the database
        // The PATCH waited for b's lease to run out (1 s after b's last ping; less when b's event loop
        // was starved and b had stopped pinging already), never much longer.
        expect(patchMs).toBeLessThan(3_000);
      } finally {
        release();
      }
    }
    await warmPet(apiKey, petId);
    const release = proxy.holdReplies("rhinarium-cache:");
    try {
      expect((await call(a, apiKey, "DELETE", `/v2/pets/${petId}`)).status).toBe(204);
      expect((await call(b, apiKey, "GET", `/v2/pets/${petId}`)).status).toBe(404);
    } finally {
      release();
    }
  });

  it("a fingerprint addition another process committed is in every pet view once its job is seen as SUCCESS", async () => {
    const { accountId, apiKey } = await newAccount("Enrolment");
    const petId = await newPet(apiKey, 0);
    await warmPet(apiKey, petId);
    expect((await call(b, apiKey, "GET", `/v2/pets/${petId}`)).body!.data!.hasFingerprint).toBe(false);
    const release = proxy.holdReplies("rhinarium-cache:");
    try {
      // What a job worker's finishJob commits in one transaction: the images enrolled, the job SUCCESS.
      const [sessionId, jobId] = [`xs${petId}`, `xj${petId}`];
      await adminSql(
        `INSERT INTO "CaptureSession" (id, "accountId", purpose, species, "petId", "expiresAt") VALUES ('${sessionId}', '${accountId}', 'PET_PROFILE_REGISTRATION', 'DOG', '${petId}', now() + interval '1 hour');
         INSERT INTO "Job" (id, "accountId", kind, status, "petId", "sessionId") VALUES ('${jobId}', '${accountId}', 'FINGERPRINT_ADDITION', 'PENDING', '${petId}', '${sessionId}')`,
        database.url,
      );
      expect((await call(a, apiKey, "GET", `/v2/fingerprint-addition-jobs/${jobId}`)).body!.data!.status).toBe("PENDING");
      await adminSql(
        `BEGIN;
         INSERT INTO "FingerprintImage" (id, "accountId", "sessionId", "petId", "filePath", "byteSize", usable) VALUES ('xi${petId}', '${accountId}', '${sessionId}', '${petId}', 'x.jpg', 1, true);
         UPDATE "Job" SET status = 'SUCCESS', "finishedAt" = now() WHERE id = '${jobId}';
         COMMIT`,
        database.url,
      );
      expect((await call(a, apiKey, "GET", `/v2/fingerprint-addition-jobs/${jobId}`)).body!.data!.status).toBe("SUCCESS");
      expect((await call(b, apiKey, "GET", `/v2/pets/${petId}`)).body!.data!.hasFingerprint).toBe(true);
    } finally {
      release();
    }
  });

  it("a change written by another process reaches both caches by notification, and only by it", async () => {
    const { apiKey } = await newAccount("Written elsewhere");
    const petId = await newPet(apiKey, 0);
    await warmPet(apiKey, petId);
    // Written with triggers off (no notification): both answer what they hold in memory...
    await adminSql(`SET session_replication_role = replica; UPDATE "Pet" SET metadata = '"unnotified"' WHERE id = '${petId}'`, database.url);
    for (const server of [a, b]) expect(await metadataVia(server, apiKey, petId)).toBe(JSON.stringify({ v: 0 }));
    // ...written as any process writes, the notification drops it everywhere (well before the 60 s backstop).
    await adminSql(`UPDATE "Pet" SET metadata = '"notified"' WHERE id = '${petId}'`, database.url);
    for (const server of [a, b]) await expectEventually(async () => (await metadataVia(server, apiKey, petId)) === '"notified"');
  });
  it("answers from the Node front carry the API's security headers, and no document policies", async () => {
    const { apiKey } = await newAccount("Headers");
    const petId = (await call(a, apiKey, "POST", "/v2/pets", { species: "DOG" })).body!.data!.id as string;
    const answers = [
      await fetch(`${a.baseUrl}/v2/pets/${petId}`, { headers: { "x-service-api-key": apiKey } }),
      await fetch(`${a.baseUrl}/v2/pets/${petId}`, { method: "DELETE", headers: { "x-service-api-key": apiKey } }),
      await fetch(`${a.baseUrl}/v2/pets`),
      await fetch(`${a.baseUrl}/v2/pets/%E0%A4%A`),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 204, 401, 400]);
    for (const res of answers) {
      for (const { key, value } of API_SECURITY_HEADERS) expect(res.headers.get(key), key).toBe(value);
      for (const key of ["referrer-policy", "permissions-policy", "cross-origin-opener-policy"]) expect(res.headers.get(key), key).toBeNull();
    }
  });

  it("gzips a JSON answer of some size for a client that accepts gzip, as Next did, and only then", async () => {
    const { apiKey } = await newAccount("Compressed");
    for (let i = 0; i < 8; i++) {
      expect((await call(a, apiKey, "POST", "/v2/pets", { species: "CAT", breed: `Maine Coon ${i}` })).status).toBeLessThan(300);
    }
    const list = (encoding: string) => fetch(`${a.baseUrl}/v2/pets`, { headers: { "x-service-api-key": apiKey, "accept-encoding": encoding } });
    const gzipped = await list("gzip");
    const plain = await list("identity");
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    expect(plain.headers.get("content-encoding")).toBeNull();
    for (const res of [gzipped, plain]) expect(res.headers.get("vary")).toContain("accept-encoding");
    // fetch decodes the gzip body: both answers must carry the same JSON, the list of all 8 pets.
    const [fromGzip, fromPlain] = [await gzipped.json(), await plain.json()];
    expect(fromGzip).toEqual(fromPlain);
    expect(Number(plain.headers.get("content-length"))).toBeGreaterThanOrEqual(1024);
  });

  it("a key deactivated by the ops CLI is refused by both processes on their next call", async () => {
    const { accountId, apiKey } = await newAccount("Deactivated");
    await warm(apiKey);
    await ops(a.env, "key:deactivate", accountId);
    for (const server of [a, b]) {
      const refused = await call(server, apiKey, "GET", "/v2/pets");
      expect(refused.status).toBe(401);
      expect(refused.body!.errors![0].code).toBe("SERVICEB2B10000");
    }
    const { apiKey: reissued } = (await ops(a.env, "key:reissue", accountId)) as { apiKey: string };
    for (const server of [a, b]) expect((await call(server, reissued, "GET", "/v2/pets")).status).toBe(200);
  });

  it("suspension, reinstatement and a plan change reach both processes' next calls", async () => {
    const { accountId, apiKey } = await newAccount("Suspended");
    await warm(apiKey);
    await ops(a.env, "account:suspend", accountId);
    for (const server of [a, b]) expect((await call(server, apiKey, "GET", "/v2/pets")).body!.errors![0].code).toBe("SERVICEB2B10010");
    await ops(a.env, "account:reinstate", accountId);
    for (const server of [a, b]) expect((await call(server, apiKey, "GET", "/v2/pets")).status).toBe(200);

    await ops(a.env, "plan:upsert", "xproc-one-pet", "--pet-limit", "1", "--identification", "no");
    await ops(a.env, "account:plan", accountId, "xproc-one-pet");
    expect((await call(a, apiKey, "POST", "/v2/pets", { species: "CAT" })).status).toBe(201);
    const refused = await call(b, apiKey, "POST", "/v2/pets", { species: "CAT" });
    expect(refused.status).toBe(402);
    expect(refused.body!.errors![0].code).toBe("SERVICEB2B10005");
  });

  it("a process whose notification connection is lost stops caching keys until it listens again", async () => {
    const { accountId, apiKey } = await newAccount("Lost listener");
    await warm(apiKey);
    // Both processes lose their listening connections; the deactivation's notification reaches no one.
    await adminSql(`SELECT pg_terminate_backend(pid) FROM (${LISTENERS_SQL(databaseName())}) l`, database.url);
    // A process busy elsewhere may notice the loss late; its lease ends its answers from memory anyway.
    await new Promise((r) => setTimeout(r, LEASE_MS + 300));
    await adminSql(`UPDATE "ApiKey" SET active = false WHERE "accountId" = '${accountId}'`, database.url);
    for (const server of [a, b]) expect((await call(server, apiKey, "GET", "/v2/pets")).status).toBe(401);
    // They listen again by themselves (250 ms, doubling) and cache again; notifications flow again.
    for (let i = 0; i < 150 && (await listenerCount()) < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await listenerCount()).toBe(2);
    const { apiKey: reissued } = (await ops(a.env, "key:reissue", accountId)) as { apiKey: string };
    await warm(reissued);
    await adminSql(`UPDATE "ApiKey" SET active = false WHERE "accountId" = '${accountId}'`, database.url);
    // No barrier waits for a raw SQL write: its notification may still be on its way when the call
    // arrives. Notifications flowing means the refusal comes within a lease; without them a cached
    // key would be served until the cache's 60 s backstop.
    for (const server of [a, b]) await expectEventually(async () => (await call(server, reissued, "GET", "/v2/pets")).status === 401, LEASE_MS * 3);
    expect(a.log() + b.log()).toMatch(/database-listen-connection-lost/);
  });

  it("a process whose notification connection is lost stops answering pets from memory until it listens again", async () => {
    const { apiKey } = await newAccount("Lost listener, pets");
    const petId = await newPet(apiKey, 0);
    await warmPet(apiKey, petId);
    const unnotified = (v: string) => adminSql(`SET session_replication_role = replica; UPDATE "Pet" SET metadata = '"${v}"' WHERE id = '${petId}'`, database.url);
    await adminSql(`SELECT pg_terminate_backend(pid) FROM (${LISTENERS_SQL(databaseName())}) l`, database.url);
    await new Promise((r) => setTimeout(r, LEASE_MS + 300)); // as above: the lease bounds a late notice
    await unnotified("while lost");
    for (const server of [a, b]) expect(await metadataVia(server, apiKey, petId)).toBe('"while lost"');
    for (let i = 0; i < 150 && (await listenerCount()) < 2; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300)); // the first ping back
    await warmPet(apiKey, petId);
    await unnotified("after");
    for (const server of [a, b]) expect(await metadataVia(server, apiKey, petId)).toBe('"while lost"'); // caching again
  });
});
