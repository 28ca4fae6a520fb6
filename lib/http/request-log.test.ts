import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { logInfo } from "@/lib/log";
import { metrics } from "@/lib/metrics";
import { metricsAllowed } from "@/lib/server/metrics-endpoint";
import { observeRequest } from "./request-log";

// The door's request ids, access lines and latency metric, on a real Node server in this process.

let server: http.Server;
let base: string;
const lines: string[] = [];

beforeAll(async () => {
  vi.stubEnv("LOG_LEVEL", "info");
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (lines.push(String(chunk)), true));
  server = http.createServer((req, res) =>
    observeRequest(req, res, () => "/things/{id}", () => {
      logInfo("inside", { step: 1 });
      setTimeout(() => res.writeHead(req.url === "/missing" ? 404 : 200).end("ok"), 5);
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const parsed = () => lines.flatMap((l) => l.split("\n")).filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

describe("each request", () => {
  it("gets a request id, sent back and carried by every line logged while it is served, and one access line", async () => {
    const res = await fetch(`${base}/things/1?secret=x`);
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((r) => setTimeout(r, 20));
    const mine = parsed().filter((l) => l.requestId === id);
    expect(mine.map((l) => l.event)).toEqual(["inside", "request"]);
    expect(mine[1]).toMatchObject({ level: "info", method: "GET", path: "/things/1", route: "/things/{id}", status: 200 });
    expect(typeof mine[1].ms).toBe("number");
  });

  it("keeps a client's plain request id and replaces one that is not a plain token", async () => {
    expect((await fetch(`${base}/a`, { headers: { "x-request-id": "clinic-app.42" } })).headers.get("x-request-id")).toBe("clinic-app.42");
    const odd = await fetch(`${base}/a`, { headers: { "x-request-id": "x".repeat(129) } });
    expect(odd.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("is counted in the latency histogram by method, route and status", async () => {
    const count = async () => (await metrics().httpRequestSeconds.get()).values.find((v) => v.metricName?.endsWith("_count") && v.labels.status === "404")?.value ?? 0;
    const before = await count();
    await fetch(`${base}/missing`);
    await new Promise((r) => setTimeout(r, 20));
    expect(await count()).toBe(before + 1);
    expect((await metrics().registry.metrics())).toContain('rhinarium_http_request_duration_seconds_count{method="GET",route="/things/{id}",status="404"}');
  });
});

describe("the metrics endpoint's door", () => {
  const req = (remoteAddress: string, authorization?: string) => ({ socket: { remoteAddress }, headers: authorization ? { authorization } : {} }) as unknown as http.IncomingMessage;
  it("without METRICS_TOKEN answers only clients on this machine", () => {
    expect(metricsAllowed(req("127.0.0.1"), undefined)).toBe(true);
    expect(metricsAllowed(req("::1"), undefined)).toBe(true);
    expect(metricsAllowed(req("203.0.113.9"), undefined)).toBe(false);
  });
  it("with METRICS_TOKEN asks every client, this machine's too, for it as a bearer token", () => {
    const token = "a-token-of-twenty-chars";
    expect(metricsAllowed(req("203.0.113.9", `Bearer ${token}`), token)).toBe(true);
    expect(metricsAllowed(req("127.0.0.1"), token)).toBe(false);
    expect(metricsAllowed(req("127.0.0.1", `Bearer ${token}x`), token)).toBe(false);
  });
});
