import { spawn } from "node:child_process";

// A second, well-behaved client that measures what other requests cost it: it runs in a process of
// its own (so that the test's own client work is not counted), sends one GET every `intervalMs`
// until stopped (or `maxMs` passed), and reports every latency.

export interface LatencyProbe {
  /** Stops the client; answers its latencies in ms, in order. */
  stop(): Promise<number[]>;
}

export function startLatencyProbe(url: string, headers: Record<string, string>, options: { intervalMs?: number; maxMs?: number } = {}): LatencyProbe {
  const intervalMs = options.intervalMs ?? 25;
  const maxMs = options.maxMs ?? 3 * 3600_000;
  const script = `
    const latencies = [];
    let stopped = false;
    process.stdin.on("data", () => (stopped = true));
    process.stdin.on("end", () => (stopped = true));
    const until = Date.now() + ${maxMs};
    (async () => {
      while (!stopped && Date.now() < until) {
        const started = performance.now();
        try {
          const res = await fetch(${JSON.stringify(url)}, { headers: ${JSON.stringify(headers)} });
          await res.arrayBuffer();
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
  child.stdout.on("data", (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    async stop() {
      child.stdin.end("stop");
      await exited;
      return JSON.parse(out || "[]") as number[];
    },
  };
}
