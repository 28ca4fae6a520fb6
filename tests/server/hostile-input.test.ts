import fs from "node:fs";
import net from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quantile } from "@/lab/bench/stats";
import { startLatencyProbe } from "@/lab/test-support/latency-probe";
import { appearanceJpeg, noseCapture } from "@/lab/test-support/nose-images";
import { adminSql, buildOnce, ensurePostgres, ops, PG_ADMIN_URL, startServer, type TestServer } from "@/lab/test-support/server";
import {
  hostileImages,
  hostileRequestArb,
  judge,
  routesFromOpenApi,
  rssMb,
  sendRaw,
  type HostileImages,
  type HostileRequest,
  type Route,
  type Targets,
} from "@/lab/test-support/hostile-input";

// Property: whatever a client sends to any /v2 route, the answer is the documented error shape (or
// a success for a request that happens to be valid): never a 5xx, never a hang, memory bounded.
// Sized for `npm test`; `npm run hostile` runs the same property for longer (docs/reliability.md).

const RUNS = process.env.HOSTILE_RUNS
  ? { pglite: Number(process.env.HOSTILE_RUNS), postgres: Number(process.env.HOSTILE_RUNS) }
  : { pglite: 500, postgres: 500 };
const HANG_MS = 30_000;
/**
 * A well-behaved client of another account, while the hostile run goes on: how much the run may add
 * to its GET's 95th percentile, over the same client alone on the same machine just before. (Not the
 * 99th: the test-sized run gives the client 50–100 GETs, of which the 99th percentile is the single
 * slowest, one scheduling hiccup of a two-core machine. The long run logs the 99th.)
 */
const MAX_IMPOSED_P95_MS = Number(process.env.HOSTILE_COST_P95_MS ?? 50);
/** The longest any one of the client's GETs may wait while the run goes on: a stall, not a tail. */
const MAX_STALL_MS = Number(process.env.HOSTILE_STALL_MS ?? 500);
const BASELINE_MS = 5000;
/** Growth of the server's resident memory over the run that would mean a leak or an unbounded buffer. */
const MAX_RSS_GROWTH_MB = 400;

async function uploadForm(server: TestServer, key: string, kind: string, sessionId: string, bytes: Buffer) {
  const form = new FormData();
  form.append("file", new Blob([bytes as BlobPart], { type: "image/jpeg" }), "x.jpg");
  const res = await fetch(`${server.baseUrl}/v2/${kind}:upload?sessionId=${sessionId}`, { method: "POST", headers: { "x-service-api-key": key }, body: form });
  expect(res.status).toBe(201);
}

async function json(server: TestServer, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(server.baseUrl + path, {
    method,
    headers: { "x-service-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { data: Record<string, string> } };
}

/** A pet, a live registration session, and a finished job of that account. */
async function makeTargets(server: TestServer): Promise<Targets> {
  const account = await ops(server.env, "account:create", "--name", "Hostile", "--plan", "standard");
  const apiKey = account.apiKey as string;
  const petId = (await json(server, apiKey, "POST", "/v2/pets", { species: "DOG" })).body.data.id;
  const done = (await json(server, apiKey, "POST", "/v2/capture-sessions", { species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId })).body.data.id;
  for (let i = 0; i < 5; i++) await uploadForm(server, apiKey, "fingerprints", done, await noseCapture(3, i));
  await uploadForm(server, apiKey, "appearances", done, await appearanceJpeg());
  const jobId = (await json(server, apiKey, "POST", `/v2/pets/${petId}:addFingerprints`, { sessionId: done })).body.data.jobId;
  const sessionId = (await json(server, apiKey, "POST", "/v2/capture-sessions", { species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId })).body.data.id;
  return { apiKey, petId, sessionId, jobId };
}

/**
 * The requests the security review found costly (seconds of main-thread parsing each, before the
 * server's limits): 168,000 tiny multipart parts, unsigned to the sign-in page and a dashboard page,
 * and with a valid key to an upload whose session does not exist.
 */
async function expensiveRequests(server: TestServer, targets: Targets): Promise<void> {
  const boundary = "costly";
  const body = new Uint8Array(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="a"\r\n\r\nx\r\n`.repeat(168_000) + `--${boundary}--\r\n`));
  const headers = { "content-type": `multipart/form-data; boundary=${boundary}` };
  const sends: [string, Record<string, string>, number[]][] = [
    ["/sign-in", headers, [413, 415]],
    ["/dashboard/capture/register", { ...headers, cookie: "next-auth.session-token=forged" }, [413]],
    ["/v2/fingerprints:upload?sessionId=does-not-exist", { ...headers, "x-service-api-key": targets.apiKey }, [404]],
    [`/v2/fingerprints:upload?sessionId=${targets.sessionId}`, { ...headers, "x-service-api-key": targets.apiKey }, [400]],
  ];
  for (const [path, h, statuses] of sends) {
    const res = await fetch(server.baseUrl + path, { method: "POST", headers: h, body }).catch((error: Error) => ({ status: error.message, text: async () => "" }));
    expect(statuses, `${path}: ${res.status}`).toContain(res.status);
    await res.text();
  }
}

interface Tally {
  sent: number;
  unsendable: number;
  byStatus: Map<number, number>;
  slowestMs: number;
}

function hostileSuite(mode: "pglite" | "postgres") {
  let server: TestServer;
  let routes: Route[];
  let targets: Targets;
  let images: HostileImages;
  const databaseName = `rhinarium_rely_hostile_${process.pid}_${Date.now()}`;
  let databaseUrl: string | undefined;

  beforeAll(async () => {
    if (mode === "postgres") {
      await ensurePostgres();
      await adminSql(`CREATE DATABASE ${databaseName}`);
      databaseUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${databaseName}`);
    }
    // The rate limit would answer most of this run with 429; it has its own test.
    server = await startServer({ databaseUrl, env: { API_RATE_LIMIT_PER_SECOND: "100000", API_RATE_LIMIT_BURST: "100000" } });
    routes = await routesFromOpenApi(server.baseUrl);
    targets = await makeTargets(server);
    images = await hostileImages();
  });

  afterAll(async () => {
    await server?.stop();
    if (mode === "postgres") await adminSql(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
  });

  it(`answers ${RUNS[mode]} hostile requests on every route with documented 4xx shapes, no 5xx, no hang, bounded memory, at a bounded cost to another tenant`, async () => {
    expect(routes.length).toBeGreaterThanOrEqual(11);
    // Cost: another account's client reads its pets all along, from a process of its own.
    const bystander = await ops(server.env, "account:create", "--name", "Bystander", "--plan", "standard");
    const bystanderGet: [string, Record<string, string>] = [`${server.baseUrl}/v2/pets`, { "x-service-api-key": bystander.apiKey as string }];
    // The same client alone first: what this (shared) machine gives it without hostile traffic.
    const quiet = await startLatencyProbe(...bystanderGet);
    await new Promise((r) => setTimeout(r, BASELINE_MS));
    const baseline = (await quiet.stop()).filter((ms) => ms >= 0);
    const probe = await startLatencyProbe(...bystanderGet);
    await expensiveRequests(server, targets);
    const tally: Tally = { sent: 0, unsendable: 0, byStatus: new Map(), slowestMs: 0 };
    const rssBefore = await rssMb(server.pid);
    const latencies: number[] = [];
    const property = fc.asyncProperty(hostileRequestArb(routes, targets, images, { oversizedWeight: mode === "pglite" ? 1 : 0 }), async (req: HostileRequest) => {
      let answer;
      try {
        answer = await sendRaw(server.baseUrl, req, HANG_MS);
      } catch (error) {
        if ((error as { unsendable?: boolean }).unsendable) {
          tally.unsendable++;
          return;
        }
        throw new Error(`${req.label} (${req.method} ${req.target.slice(0, 120)}): ${(error as Error).message}`);
      }
      tally.sent++;
      tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1);
      tally.slowestMs = Math.max(tally.slowestMs, answer.ms);
      const verdict = judge(req, answer);
      if (verdict) throw new Error(`${req.label} (${req.method} ${req.target.slice(0, 120)}): ${verdict}`);
    });
    try {
      await fc.assert(property, { numRuns: RUNS[mode], seed: Number(process.env.HOSTILE_SEED ?? 20261123), endOnFailure: true });
    } finally {
      latencies.push(...(await probe.stop()));
    }
    const rssAfter = await rssMb(server.pid);
    const answered = latencies.filter((ms) => ms >= 0);
    console.log(
      `[hostile ${mode}] sent ${tally.sent} (+${tally.unsendable} unsendable), statuses ${JSON.stringify(Object.fromEntries(tally.byStatus))}, slowest ${Math.round(tally.slowestMs)} ms, RSS ${Math.round(rssBefore)} -> ${Math.round(rssAfter)} MB; ` +
        `bystander GETs ${latencies.length}, failed ${latencies.length - answered.length}, p50 ${quantile(answered, 0.5).toFixed(1)} ms, p95 ${quantile(answered, 0.95).toFixed(1)} ms, p99 ${quantile(answered, 0.99).toFixed(1)} ms, max ${Math.max(...answered).toFixed(1)} ms; ` +
        `alone before: ${baseline.length} GETs, p50 ${quantile(baseline, 0.5).toFixed(1)} ms, p95 ${quantile(baseline, 0.95).toFixed(1)} ms, p99 ${quantile(baseline, 0.99).toFixed(1)} ms`,
    );
    expect(answered.length).toBe(latencies.length);
    expect(answered.length).toBeGreaterThan(20);
    // The latency the hostile traffic adds to the bystander's 95th percentile (over what the machine gives it
    // alone), and no GET stalled behind it.
    expect(quantile(answered, 0.95) - quantile(baseline, 0.95)).toBeLessThanOrEqual(MAX_IMPOSED_P95_MS);
    expect(Math.max(...answered)).toBeLessThanOrEqual(MAX_STALL_MS);
    expect(tally.sent).toBeGreaterThan(RUNS[mode] * 0.9);
    // Every status class that the generators aim at was reached: the property did not only see 401s.
    for (const status of [400, 404]) expect(tally.byStatus.get(status) ?? 0).toBeGreaterThan(10);
    expect(rssAfter - rssBefore).toBeLessThan(MAX_RSS_GROWTH_MB);
    // Still healthy: an ordinary call answers. (The target pet itself may be gone: DELETE with the
    // real id is one of the generated path tricks.)
    const res = await fetch(`${server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": targets.apiKey } });
    expect(res.status).toBe(200);
  }, 3 * 3600_000);

  if (mode === "pglite") {
    it("survives connection-level abuse: bodies shorter than declared, idle half-sent requests, abrupt resets", async () => {
      const { port } = new URL(server.baseUrl);
      const open: net.Socket[] = [];
      const connect = () =>
        new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(Number(port), "127.0.0.1", () => resolve(s));
          s.on("error", () => undefined);
          s.once("error", reject);
        });
      const head = (path: string, length: number, type: string) =>
        `POST ${path} HTTP/1.1\r\nhost: x\r\nx-service-api-key: ${targets.apiKey}\r\ncontent-type: ${type}\r\ncontent-length: ${length}\r\n\r\n`;
      for (let i = 0; i < 40; i++) {
        const s = await connect();
        open.push(s);
        if (i % 4 === 0) s.write(head("/v2/pets", 5000, "application/json") + '{"species":"DO'); // then silence
        else if (i % 4 === 1) s.end(head(`/v2/fingerprints:upload?sessionId=${targets.sessionId}`, 1_000_000, "multipart/form-data; boundary=b") + "--b\r\n");
        else if (i % 4 === 2) s.write(`GET /v2/pets HTTP/1.1\r\nhost: x\r\nx-service-a`); // headers never finish
        else {
          s.write(head("/v2/pets", 100, "application/json") + "{");
          s.resetAndDestroy();
        }
      }
      // With those connections hanging, ordinary calls still answer promptly.
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const res = await fetch(`${server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": targets.apiKey } });
        expect(res.status).toBe(200);
        expect(performance.now() - started).toBeLessThan(2000);
      }
      for (const s of open) s.destroy();
      expect(server.log()).not.toMatch(/"api-unhandled-error"/);
    });
  }
}

beforeAll(async () => {
  await buildOnce();
}, 600_000);

describe("hostile input over HTTP, embedded PGlite", () => hostileSuite("pglite"));

describe("hostile input over HTTP, PostgreSQL", () => hostileSuite("postgres"));
