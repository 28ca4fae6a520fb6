import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeOf, modeServer, type ModeServer } from "@/lab/test-support/api";
import { buildOnce, ops } from "@/lab/test-support/server";

// The server's door on the real server, in both database modes: health endpoints without a key,
// targets and paths Next would answer with a 500, and input the API must refuse as 10001.

function rawStatus(baseUrl: string, request: string): Promise<number> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), "127.0.0.1", () => socket.end(request));
    let out = "";
    socket.on("data", (d: Buffer) => (out += d));
    socket.on("end", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0)));
    socket.on("error", reject);
  });
}

function hardeningSuite(mode: "pglite" | "postgres") {
  let world: ModeServer;
  let apiKey: string;

  beforeAll(async () => {
    world = await modeServer(mode, "hardening");
    apiKey = (await world.account("Hardening")).apiKey;
  });

  afterAll(async () => {
    await world?.close();
  });

  it("answers /healthz and /readyz without a key: process up; database, migrations and engine ready", async () => {
    const health = await fetch(`${world.server.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${world.server.baseUrl}/readyz`);
    expect(await ready.json()).toEqual({ status: "ok", checks: { database: "ok", migrations: "ok", engine: "ok" } });
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
  });

  it("serves Prometheus metrics to this machine: latency by the contract's route, engine and queue gauges; every answer names its request id", async () => {
    const base = world.server.baseUrl;
    const missing = await fetch(`${base}/v2/pets/no-such-pet`, { headers: { "x-service-api-key": apiKey } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const page = await fetch(`${base}/sign-in`, { headers: { "x-request-id": "clinic-app.7" } });
    expect(page.headers.get("x-request-id")).toBe("clinic-app.7");
    await page.text();
    await missing.text();
    await new Promise((r) => setTimeout(r, 50)); // the access line is written when the answer's socket write closes
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/rhinarium_http_request_duration_seconds_count\{method="GET",route="\/v2\/pets\/\{petId\}",status="404"\} [1-9]/);
    expect(text).toMatch(/rhinarium_http_request_duration_seconds_count\{method="GET",route="dashboard",status="\d{3}"\} [1-9]/);
    expect(text).toMatch(/rhinarium_engine_tasks\{state="queued"\} \d+/);
    expect(text).toMatch(/rhinarium_jobs_pending/);
    expect(text).toMatch(/rhinarium_gallery_pets \d+/);
    expect(text).toMatch(/rhinarium_galleries_loaded \d+/);
    expect(text).toMatch(/rhinarium_nodejs_eventloop_lag_seconds \d/);
    expect(text).not.toContain(apiKey);
  });

  it("answers 4xx, never 500, to '*' targets, a malformed auth path and NULs in dashboard URLs", async () => {
    const base = world.server.baseUrl;
    expect(await rawStatus(base, "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).toBe(400);
    expect(await rawStatus(base, "GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).toBe(400);
    for (const path of ["/api/auth/%", "/dashboard/images/fingerprint/%00", "/dashboard/pets?q=%00", "/dashboard/jobs?from=2026-13-45"]) {
      const res = await fetch(base + path, { redirect: "manual" });
      expect(res.status, path).toBeLessThan(500);
    }
  });

  it("refuses a server action sent from another origin with 403, not Next's 500", async () => {
    const res = await fetch(`${world.server.baseUrl}/dashboard`, {
      method: "POST",
      headers: { "next-action": "0123456789abcdef0123456789abcdef01234567", origin: "http://evil.example", "content-type": "text/plain;charset=UTF-8" },
      body: "[]",
      redirect: "manual",
    });
    expect(res.status).toBe(403);
  });

  it("answers a retried create with the same Idempotency-Key as the first time, creating once; the key with another body is 10001", async () => {
    const post = (body: unknown, key: string) =>
      fetch(`${world.server.baseUrl}/v2/pets`, {
        method: "POST",
        headers: { "x-service-api-key": apiKey, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body),
      });
    const count = async () => ((await (await fetch(`${world.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": apiKey } })).json()) as { data: unknown[] }).data.length;
    const before = await count();
    const key = `retry-${Date.now()}`;
    const answers = await Promise.all([0, 1, 2].map(() => post({ species: "DOG", metadata: '{"name":"Rex"}' }, key)));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(bodies.map((b) => b.data.id)).size).toBe(1);
    expect(answers.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(2);
    expect(await count()).toBe(before + 1);
    const reused = await post({ species: "CAT" }, key);
    expect(reused.status).toBe(400);
    expect(await reused.json()).toEqual({ errors: [{ code: "SERVICEB2B10001", details: { "idempotency-key": ["was used with another request"] } }] });
    expect((await post({ species: "DOG" }, "bad key")).status).toBe(400);
    expect(await count()).toBe(before + 1);
  });

  if (mode === "pglite") {
    it("backs the embedded database and images up while serving (ops backup), and restores them into a new DATA_DIR (ops restore)", async () => {
      const created = await fetch(`${world.server.baseUrl}/v2/pets`, {
        method: "POST",
        headers: { "x-service-api-key": apiKey, "content-type": "application/json" },
        body: JSON.stringify({ species: "CAT", metadata: '{"name":"Backed up"}' }),
      });
      expect(created.status).toBe(201);
      const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-hot-backup-")), "backup");
      const backup = await ops(world.server.env, "backup", target);
      expect(backup).toMatchObject({ backup: target, format: 1 });
      // The server kept serving.
      expect((await fetch(`${world.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": apiKey } })).status).toBe(200);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-restored-"));
      try {
        const restored = await ops({ ...world.server.env, DATA_DIR: dataDir }, "restore", target);
        expect(restored.pets as number).toBeGreaterThanOrEqual(1);
        expect(restored.accounts as number).toBeGreaterThanOrEqual(1);
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
        fs.rmSync(path.dirname(target), { recursive: true, force: true });
      }
    }, 120_000);
  }

  it("refuses invalid UTF-8 in a JSON body as 10001 instead of storing U+FFFD", async () => {
    const body = Buffer.concat([Buffer.from('{"species":"DOG","metadata":"{\\"name\\":\\"'), Buffer.from([0xc3, 0x28]), Buffer.from('\\"}"}')]);
    const res = await fetch(`${world.server.baseUrl}/v2/pets`, {
      method: "POST",
      headers: { "x-service-api-key": apiKey, "content-type": "application/json" },
      body: new Uint8Array(body),
    });
    expect(res.status).toBe(400);
    expect(codeOf({ status: res.status, body: await res.json() })).toBe("SERVICEB2B10001");
  });
}

beforeAll(async () => {
  await buildOnce();
}, 600_000);

describe("hardening over HTTP, embedded PGlite", () => hardeningSuite("pglite"));

describe("hardening over HTTP, PostgreSQL", () => hardeningSuite("postgres"));
