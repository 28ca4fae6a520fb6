import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/test-support/scale";
import { NO_CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from "@/lib/http/security-headers";
import { adminSql, buildOnce, ops, startServer, type TestServer } from "@/lib/test-support/server";

// Two web processes (what `npm start` runs) on one PostgreSQL database, as behind a load balancer.
// Each keeps authenticated API keys in memory (lib/accounts/api-key-cache.ts) and reads pets from the
// database on every call. What a client must be able to rely on whichever process answers:
// - read-your-writes: once a PATCH or DELETE is acknowledged, the next GET through any process sees it;
// - a key deactivated, an account suspended or its plan changed by any process or tool (here the ops
//   CLI, its own process) is in force from the next call on, in every process;
// - a process that loses its notification connection stops trusting its cache until it listens again.

let database: TestDatabase;
let a: TestServer;
let b: TestServer;

const LISTENERS_SQL = (name: string) => `SELECT pid FROM pg_stat_activity WHERE datname = '${name}' AND application_name LIKE 'rhinarium-listen-%'`;

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

async function listenerCount(): Promise<number> {
  return (await adminSql(LISTENERS_SQL(databaseName()), database.url)).length;
}

function databaseName(): string {
  return new URL(database.url).pathname.slice(1);
}

beforeAll(async () => {
  await buildOnce();
  database = await createTestDatabase("xproc");
  a = await startServer({ databaseUrl: database.url });
  b = await startServer({ databaseUrl: database.url });
  // Both listen before the tests rely on their caches.
  for (let i = 0; i < 100 && (await listenerCount()) < 2; i++) await new Promise((r) => setTimeout(r, 100));
}, 600_000);

afterAll(async () => {
  for (const server of [a, b]) {
    if (!server) continue;
    await server.stop();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
  await database?.drop();
});

describe("two web processes on one PostgreSQL database", () => {
  it("a PATCH or DELETE acknowledged by one process is seen by the next GET through the other", async () => {
    const { apiKey } = await newAccount("Read your writes");
    const created = await call(a, apiKey, "POST", "/v2/pets", { species: "DOG", metadata: JSON.stringify({ v: 0 }) });
    expect(created.status).toBe(201);
    const petId = created.body!.data!.id as string;
    for (let v = 1; v <= 10; v++) {
      const [writer, reader] = v % 2 ? [a, b] : [b, a];
      expect((await call(writer, apiKey, "PATCH", `/v2/pets/${petId}`, { metadata: JSON.stringify({ v }) })).status).toBe(200);
      const read = await call(reader, apiKey, "GET", `/v2/pets/${petId}`);
      expect(read.status).toBe(200);
      expect(read.body!.data!.metadata).toBe(JSON.stringify({ v }));
    }
    expect((await call(a, apiKey, "DELETE", `/v2/pets/${petId}`)).status).toBe(204);
    for (const server of [b, a]) {
      const gone = await call(server, apiKey, "GET", `/v2/pets/${petId}`);
      expect(gone.status).toBe(404);
      expect(gone.body!.errors![0].code).toBe("SERVICEB2B20000");
    }
  });

  it("answers from the Node front carry the security headers Next gives its own responses", async () => {
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
      for (const { key, value } of [...SECURITY_HEADERS, NO_CONTENT_SECURITY_POLICY]) expect(res.headers.get(key), key).toBe(value);
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
    await new Promise((r) => setTimeout(r, 200));
    await adminSql(`UPDATE "ApiKey" SET active = false WHERE "accountId" = '${accountId}'`, database.url);
    for (const server of [a, b]) expect((await call(server, apiKey, "GET", "/v2/pets")).status).toBe(401);
    // They listen again by themselves (250 ms, doubling) and cache again; notifications flow again.
    for (let i = 0; i < 150 && (await listenerCount()) < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await listenerCount()).toBe(2);
    const { apiKey: reissued } = (await ops(a.env, "key:reissue", accountId)) as { apiKey: string };
    await warm(reissued);
    await adminSql(`UPDATE "ApiKey" SET active = false WHERE "accountId" = '${accountId}'`, database.url);
    for (const server of [a, b]) expect((await call(server, reissued, "GET", "/v2/pets")).status).toBe(401);
    expect(a.log() + b.log()).toMatch(/database-listen-connection-lost/);
  });
});
