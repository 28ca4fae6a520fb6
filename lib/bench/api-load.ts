import { execFile, spawn } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "@/lib/test-support/server";

const run = promisify(execFile);

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** Seconds of the same load before measuring, on both sides alike: V8 has compiled the hot paths by then. */
export const WARMUP_SECONDS = 2;

/** autocannon in its own process (the load must not share the server's event loop), JSON out, after a warm-up. */
export async function loadTest(
  url: string,
  options: { connections: number; seconds: number; method?: "GET" | "POST" | "PATCH"; body?: string; headers?: Record<string, string> },
): Promise<LoadResult> {
  const args = [path.join(process.cwd(), "node_modules", "autocannon", "autocannon.js"), "-j", "-c", String(options.connections), "-d", String(options.seconds)];
  args.push("--warmup", "[", "-c", String(options.connections), "-d", String(WARMUP_SECONDS), "]");
  if (options.method) args.push("-m", options.method);
  if (options.body) args.push("-b", options.body);
  for (const [key, value] of Object.entries(options.headers ?? {})) args.push("-H", `${key}=${value}`);
  args.push(url);
  const { stdout } = await run("node", args, { maxBuffer: 64 * 1024 * 1024 });
  // One JSON line for the warm-up, then one for the measured run.
  const result = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  return { requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}

export interface CeilingServer {
  baseUrl: string;
  stop(): Promise<void>;
}

/** The bare http server (lib/bench/ceiling-server.mjs) answering `getBody` to GET, `postBody` (201) to POST and `patchBody` to PATCH. */
export async function startCeilingServer(getBody: string, postBody: string, patchBody: string): Promise<CeilingServer> {
  const port = await freePort();
  const child = spawn("node", [path.join(process.cwd(), "lib", "bench", "ceiling-server.mjs")], {
    env: { ...process.env, PORT: String(port), CEILING_GET_BODY: getBody, CEILING_POST_BODY: postBody, CEILING_PATCH_BODY: patchBody },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`ceiling server exited with ${code}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    stop: async () => {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
