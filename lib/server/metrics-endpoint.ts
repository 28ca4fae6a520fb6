import type { IncomingMessage } from "node:http";
import { readEnv } from "@/lib/env";
import { normaliseAddress } from "@/lib/http/front-guard";
import { metricsText } from "@/lib/metrics";
import { sameSecret } from "@/lib/secret-file";

// GET /metrics for Prometheus, answered by the server's door like the health endpoints. The figures are the
// service's, never a tenant's data, but they tell how busy it is: with METRICS_TOKEN set the scraper sends it as a
// bearer token; unset, only a client on this machine (the socket's address, not a forwarded one) is answered.

export const METRICS_PATH = "/metrics";

const LOOPBACK = new Set(["127.0.0.1", "::1"]);

export function metricsAllowed(req: IncomingMessage, token = readEnv().METRICS_TOKEN): boolean {
  if (token) {
    const header = req.headers.authorization ?? "";
    return header.startsWith("Bearer ") && sameSecret(header.slice("Bearer ".length), token);
  }
  return LOOPBACK.has(normaliseAddress(req.socket.remoteAddress ?? ""));
}

export async function metricsAnswer(req: IncomingMessage): Promise<{ status: number; contentType: string; body: string }> {
  if (!metricsAllowed(req)) return { status: 403, contentType: "application/json", body: JSON.stringify({ status: "forbidden" }) };
  const { contentType, body } = await metricsText();
  return { status: 200, contentType, body };
}
