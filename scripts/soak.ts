/**
 * npm run soak [-- --minutes 10 --rate 20 --mode pglite|postgres --out FILE]
 * A bounded soak of the production build on loopback: mixed /v2 traffic at a steady rate (reads,
 * creates, updates, deletes, and full registrations with verification through the real engine),
 * with the server's resident memory and the latency sampled every window. Prints one line per
 * window and a summary (RSS trend by least squares after the warm-up, latency of the first and last
 * windows, errors). Nothing is asserted: the figures go to docs/reliability.md.
 */
import fs from "node:fs";
import { parseScriptArgs } from "./script-cli";
import { apiCaller } from "../lab/test-support/api";
import { rssMb } from "../lab/test-support/hostile-input";
import { appearanceJpeg, noseCapture } from "../lab/test-support/nose-images";
import { adminSql, buildOnce, ensurePostgres, ops, PG_ADMIN_URL, startServer } from "../lab/test-support/server";

const { values } = parseScriptArgs({
  name: "soak",
  description: "A bounded soak of the production build on loopback: mixed /v2 traffic at a steady rate; RSS and latency per window.",
  options: {
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "20" },
    mode: { type: "string", default: "pglite" },
    window: { type: "string", default: "30" },
    out: { type: "string" },
  },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const windowSeconds = Number(values.window);
const mode = values.mode === "postgres" ? "postgres" : "pglite";
/** Requests in flight beyond this are not sent (counted as shed): the soak measures a steady rate, not a pile-up. */
const MAX_IN_FLIGHT = 64;
const KEPT_PETS = 40;

type Kind = "read" | "list" | "create" | "update" | "delete" | "flow";

interface Sample {
  kind: Kind;
  ms: number;
  status: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const num = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const den = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return num / den;
}

async function main() {
  if (process.env.CONTRACT_SKIP_BUILD !== "1") console.log("building (next build)...");
  await buildOnce();
  let databaseUrl: string | undefined;
  const databaseName = `rhinarium_rely_soak_${process.pid}`;
  if (mode === "postgres") {
    await ensurePostgres();
    await adminSql(`CREATE DATABASE ${databaseName}`);
    databaseUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${databaseName}`);
  }
  // The registrations beside the steady stream (uploads, job polls every 200 ms) have no set rate, and
  // went past a limit of 4 × the rate once the machine was fast (105 429s in a 10-minute run): the
  // soak measures the server, not the per-key limit (rate-limit.test.ts and security.test.ts do).
  const server = await startServer({ databaseUrl, env: { API_RATE_LIMIT_PER_SECOND: "100000", API_RATE_LIMIT_BURST: "100000" } });
  const cleanUp = async () => {
    await server.stop();
    if (databaseUrl) await adminSql(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  };
  try {
    const account = await ops(server.env, "account:create", "--name", "Soak", "--plan", "standard");
    const api = apiCaller(() => server.baseUrl, account.apiKey as string);
    const noses = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => noseCapture(51, i)));
    const appearance = await appearanceJpeg();
    const pets: string[] = [];
    for (let i = 0; i < KEPT_PETS / 2; i++) pets.push(await api.createPet());

    const samples: Sample[] = [];
    let errors = 0;
    const errorExamples: string[] = [];
    let shed = 0;
    let inFlight = 0;
    let flowRunning = false;
    const timed = async <T extends { status: number }>(kind: Kind, run: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      try {
        const res = await run();
        samples.push({ kind, ms: performance.now() - t0, status: res.status });
        if (res.status >= 500 || res.status === 429) {
          errors++;
          if (errorExamples.length < 5) errorExamples.push(`${kind} ${res.status}`);
        }
        return res;
      } catch (error) {
        errors++;
        // fetch's own message is only "fetch failed": the cause tells a client timeout
        // (UND_ERR_HEADERS_TIMEOUT) from a connection the server closed (UND_ERR_SOCKET, ECONNRESET).
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        if (errorExamples.length < 5) errorExamples.push(`${kind} ${(error as Error).message} (${cause?.code ?? ""} ${cause?.message ?? ""})`);
        throw error;
      }
    };
    const pick = () => pets[Math.floor(Math.random() * pets.length)];

    /** A registration of a new pet and a verification of it: 16 requests, the engine on every upload. */
    async function flow() {
      const petId = (await timed("create", () => api.call("POST", "/v2/pets", { species: "DOG" }))).body?.data?.id;
      if (!petId) return;
      pets.push(petId);
      const session = (purpose: string) => timed("flow", () => api.call("POST", "/v2/capture-sessions", { species: "DOG", purpose, petId }));
      const reg = (await session("PET_PROFILE_REGISTRATION")).body?.data?.id;
      if (!reg) return;
      for (const n of noses.slice(0, 5)) await timed("flow", () => api.upload("fingerprints", reg, n));
      await timed("flow", () => api.upload("appearances", reg, appearance));
      const job = (await timed("flow", () => api.call("POST", `/v2/pets/${petId}:addFingerprints`, { sessionId: reg }))).body?.data?.jobId;
      if (!job) return;
      await api.pollJob("fingerprint-addition-jobs", job);
      const ver = (await session("PET_VERIFICATION")).body?.data?.id;
      if (!ver) return;
      for (const n of noses.slice(5, 8)) await timed("flow", () => api.upload("fingerprints", ver, n));
      await timed("flow", () => api.upload("appearances", ver, appearance));
      const vjob = (await timed("flow", () => api.call("POST", `/v2/pets/${petId}:verify`, { sessionId: ver }))).body?.data?.jobId;
      if (vjob) await api.pollJob("verification-jobs", vjob);
    }

    function oneRequest(): Promise<unknown> {
      const r = Math.random();
      if (r < 0.5) return timed("read", () => api.call("GET", `/v2/pets/${pick()}`));
      if (r < 0.6) return timed("list", () => api.call("GET", "/v2/pets"));
      if (r < 0.7) return timed("update", () => api.call("PATCH", `/v2/pets/${pick()}`, { metadata: JSON.stringify({ at: Date.now() }) }));
      if (r < 0.85) {
        return timed("create", () => api.call("POST", "/v2/pets", { species: "CAT", metadata: "{}" })).then((res) => {
          if (res.body?.data?.id) pets.push(res.body.data.id);
        });
      }
      if (pets.length > KEPT_PETS) {
        const victim = pets.splice(0, 1)[0];
        return timed("delete", () => api.call("DELETE", `/v2/pets/${victim}`));
      }
      return timed("read", () => api.call("GET", `/v2/pets/${pick()}`));
    }

    const started = performance.now();
    const endAt = started + minutes * 60_000;
    const windows: { t: number; rssMb: number; requests: number; p50: number; p95: number; p99: number; errors: number }[] = [];
    let windowStart = 0;
    let errorsAtWindowStart = 0;
    const sampler = setInterval(async () => {
      const window = samples.slice(windowStart);
      windowStart = samples.length;
      const sorted = window.filter((s) => s.kind !== "flow").map((s) => s.ms).sort((a, b) => a - b);
      const w = {
        t: Math.round((performance.now() - started) / 1000),
        rssMb: Math.round(await rssMb(server.pid)),
        requests: window.length,
        p50: Math.round(percentile(sorted, 50)),
        p95: Math.round(percentile(sorted, 95)),
        p99: Math.round(percentile(sorted, 99)),
        errors: errors - errorsAtWindowStart,
      };
      errorsAtWindowStart = errors;
      windows.push(w);
      console.log(JSON.stringify(w));
    }, windowSeconds * 1000);

    const interval = 1000 / rate;
    let next = performance.now();
    let sent = 0;
    while (performance.now() < endAt) {
      // One registration + verification at a time, beside the steady stream.
      if (!flowRunning) {
        flowRunning = true;
        void flow()
          .catch(() => undefined)
          .finally(() => (flowRunning = false));
      }
      if (inFlight >= MAX_IN_FLIGHT) shed++;
      else {
        inFlight++;
        sent++;
        void oneRequest()
          .catch(() => undefined)
          .finally(() => inFlight--);
      }
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    while (inFlight > 0 || flowRunning) await new Promise((r) => setTimeout(r, 100));
    clearInterval(sampler);

    const afterWarmUp = windows.filter((w) => w.t > Math.min(120, (minutes * 60) / 4));
    const rssTrend = slope(afterWarmUp.map((w) => [w.t / 60, w.rssMb]));
    const all = samples.filter((s) => s.kind !== "flow").map((s) => s.ms).sort((a, b) => a - b);
    const flows = samples.filter((s) => s.kind === "flow").map((s) => s.ms).sort((a, b) => a - b);
    const summary = {
      mode,
      minutes,
      targetRate: rate,
      achievedRate: Math.round((samples.length / ((performance.now() - started) / 1000)) * 10) / 10,
      requests: samples.length,
      steadyRequestsSent: sent,
      shed,
      errors,
      errorExamples,
      byStatus: Object.fromEntries([...new Set(samples.map((s) => s.status))].sort().map((st) => [st, samples.filter((s) => s.status === st).length])),
      latencyMs: { p50: Math.round(percentile(all, 50)), p95: Math.round(percentile(all, 95)), p99: Math.round(percentile(all, 99)), max: Math.round(all[all.length - 1]) },
      uploadAndStartLatencyMs: { p50: Math.round(percentile(flows, 50)), p95: Math.round(percentile(flows, 95)) },
      firstWindow: windows[0],
      lastWindow: windows[windows.length - 1],
      rssMb: { min: Math.min(...windows.map((w) => w.rssMb)), max: Math.max(...windows.map((w) => w.rssMb)), trendMbPerMinuteAfterWarmUp: Math.round(rssTrend * 100) / 100 },
    };
    console.log(`SUMMARY ${JSON.stringify(summary)}`);
    if (values.out) fs.writeFileSync(values.out, JSON.stringify({ summary, windows }, null, 2));
  } finally {
    await cleanUp();
  }
}

await main();
