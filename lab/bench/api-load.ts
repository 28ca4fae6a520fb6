import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freePort } from "@/lab/test-support/server";

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time (user + system, all threads) per request of each process asked for, and of autocannon itself, in µs. */
  cpuMicrosPerRequest: Record<string, number>;
}

/** Seconds of the same load before measuring, on both sides alike: V8 has compiled the hot paths by then. */
export const WARMUP_SECONDS = 2;

/** Linux's clock ticks per second for /proc/<pid>/stat times (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** CPU time of a process so far (user + system, every thread), in µs; 0 once it is gone. */
export function processCpuMicros(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The PostgreSQL server's processes on this machine (the postmaster and its backends). */
export function postgresPids(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/comm`, "utf8").trim() === "postgres";
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * autocannon in its own process (the load must not share the server's event loop), JSON out, after a
 * warm-up. With `cpuOf` (name → pids), the CPU time those processes and autocannon spent per request
 * is measured from /proc over the measured run less half a second at each end.
 */
export async function loadTest(
  url: string,
  options: {
    connections: number;
    seconds: number;
    method?: "GET" | "POST" | "PATCH";
    body?: string;
    headers?: Record<string, string>;
    cpuOf?: Record<string, () => number[]>;
  },
): Promise<LoadResult> {
  const args = [path.join(process.cwd(), "node_modules", "autocannon", "autocannon.js"), "-j", "-c", String(options.connections), "-d", String(options.seconds)];
  args.push("--warmup", "[", "-c", String(options.connections), "-d", String(WARMUP_SECONDS), "]");
  if (options.method) args.push("-m", options.method);
  if (options.body) args.push("-b", options.body);
  for (const [key, value] of Object.entries(options.headers ?? {})) args.push("-H", `${key}=${value}`);
  args.push(url);
  const child = spawn("node", args, { stdio: ["ignore", "pipe", "inherit"] });
  let stdout = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const processes = { ...options.cpuOf, autocannon: () => [child.pid!] };
  const cpuNow = () => Object.fromEntries(Object.entries(processes).map(([name, pids]) => [name, pids().reduce((sum, pid) => sum + processCpuMicros(pid), 0)]));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  let window: { seconds: number; before: Record<string, number>; after: Record<string, number> } | undefined;
  if (options.cpuOf && options.seconds > 1) {
    await sleep((WARMUP_SECONDS + 0.5) * 1000);
    const before = cpuNow();
    const started = performance.now();
    await sleep((options.seconds - 1) * 1000);
    window = { before, after: cpuNow(), seconds: (performance.now() - started) / 1000 };
  }
  const code = await exited;
  if (code !== 0) throw new Error(`autocannon exited with ${code}`);
  // One JSON line for the warm-up, then one for the measured run.
  const result = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  const requests = result.requests.average * (window?.seconds ?? 0);
  const cpuMicrosPerRequest = window && requests > 0 ? Object.fromEntries(Object.keys(processes).map((name) => [name, (window.after[name] - window.before[name]) / requests])) : {};
  return { requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors, cpuMicrosPerRequest };
}

export interface CeilingServer {
  baseUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/** The bare http server (lab/bench/ceiling-server.mjs) answering `getBody` to GET, `postBody` (201) to POST and `patchBody` to PATCH. */
export async function startCeilingServer(getBody: string, postBody: string, patchBody: string): Promise<CeilingServer> {
  const port = await freePort();
  const child = spawn("node", [path.join(process.cwd(), "lab", "bench", "ceiling-server.mjs")], {
    env: { ...process.env, PORT: String(port), CEILING_GET_BODY: getBody, CEILING_POST_BODY: postBody, CEILING_PATCH_BODY: patchBody },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`ceiling server exited with ${code}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
