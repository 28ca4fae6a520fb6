import client from "prom-client";
import { processWide } from "@/lib/process-state";

// The process's Prometheus metrics (prom-client), served at GET /metrics (lib/api/node-front.ts): request latency by
// route, job time by kind and outcome, webhook attempts by outcome, and gauges the server wires at start-up (lib/server/start.ts) for what only it
// can see (queue depth, engine pool load, gallery sizes), plus Node's own (event-loop lag, heap, CPU). One registry per
// process, kept in lib/process-state.ts because Next bundles the server's start-up and its route handlers separately.

export interface Metrics {
  registry: client.Registry;
  httpRequestSeconds: client.Histogram<"method" | "route" | "status">;
  jobSeconds: client.Histogram<"kind" | "status">;
  webhookAttempts: client.Counter<"outcome">;
}

function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: "rhinarium_" });
  return {
    registry,
    httpRequestSeconds: new client.Histogram({
      name: "rhinarium_http_request_duration_seconds",
      help: "Time from a request's arrival to its answer, by method, route (the contract's template for /v2) and status.",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    jobSeconds: new client.Histogram({
      name: "rhinarium_job_duration_seconds",
      help: "Time a job took from its start to its end in this process, by kind and final status.",
      labelNames: ["kind", "status"],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    webhookAttempts: new client.Counter({
      name: "rhinarium_webhook_attempts_total",
      help: "Webhook delivery attempts this process made, by outcome: succeeded, retrying (to be tried again) or failed (the last attempt).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
  };
}

export function metrics(): Metrics {
  return processWide("metrics", createMetrics);
}

/**
 * A gauge read when scraped: `read` returns one value per label set (an empty label set for an unlabelled gauge).
 * Registering a name twice replaces nothing and returns quietly (a second start-up in one process, as tests do).
 */
export function registerGauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Promise<{ labels: Partial<Record<L, string>>; value: number }[]>,
): void {
  const { registry } = metrics();
  if (registry.getSingleMetric(name)) return;
  new client.Gauge<L>({
    name,
    help,
    labelNames: [...labelNames],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { labels, value } of await read()) this.set(labels, value);
    },
  });
}

/** The text exposition format Prometheus scrapes. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  const { registry } = metrics();
  return { contentType: registry.contentType, body: await registry.metrics() };
}
