import { spawn } from "node:child_process";

// A second, well-behaved client that measures what other requests cost it: it runs in a process of
// its own (so that the test's own client work is not counted), sends one GET every `intervalMs`
// until stopped (or `maxMs` passed), and reports every latency. Its first requests are not
// measured: they open the connection and warm the client's own HTTP stack (a fresh Node process's
// first fetch takes ~100 ms on its own), which is the client's cost, not the server's.

export interface LatencyProbe {
  /** Stops the client; answers its latencies in ms, in order. */
  stop(): Promise<number[]>;
}

/** Requests sent before measuring. */
const WARM_UP_REQUESTS = 3;

/** Starts the client; resolves once it is warm and measuring. */
export async function startLatencyProbe(url: string, headers: Record<string, string>, options: { intervalMs?: number; maxMs?: number } = {}): Promise<LatencyProbe> {
  const intervalMs = options.intervalMs ?? 25;
  const maxMs = options.maxMs ?? 3 * 3600_000;
  const script = `
    const latencies = [];
    let stopped = false;
    process.stdin.on("data", () => (stopped = true));
    process.stdin.on("end", () => (stopped = true));
    const until = Date.now() + ${maxMs};
    const get = async () => {
      const res = await fetch(${JSON.stringify(url)}, { headers: ${JSON.stringify(headers)} });
      await res.arrayBuffer();
      return res;
    };
    (async () => {
      for (let i = 0; i < ${WARM_UP_REQUESTS}; i++) await get().catch(() => undefined);
      process.stdout.write("ready\\n");
      while (!stopped && Date.now() < until) {
        const started = performance.now();
        try {
          const res = await get();
          latencies.push(res.ok ? performance.now() - started : -res.status);
        } catch {
          latencies.push(-1);
        }
        await new Promise((r) => setTimeout(r, ${intervalMs}));
      }
      process.stdout.write(JSON.stringify(latencies));
    })();`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("ready\n")) resolve();
    });
    void exited.then(() => reject(new Error("the latency probe exited before it was ready")));
  });
  return {
    async stop() {
      child.stdin.end("stop");
      await exited;
      return JSON.parse(out.slice(out.indexOf("ready\n") + 6) || "[]") as number[];
    },
  };
}
