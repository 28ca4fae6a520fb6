import http from "node:http";
import https from "node:https";
import { assertPublicLiteral, guardedLookup } from "./address-guard";

/** How long one attempt may take, connection to response headers. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface SendOutcome {
  /** The response's HTTP status; absent when none came (refused, timed out, connection failed). */
  statusCode?: number;
  error?: string;
  durationMs: number;
}

export type WebhookSender = (url: string, headers: Record<string, string>, body: string, options: { timeoutMs: number; allowPrivate: boolean }) => Promise<SendOutcome>;

/**
 * One POST, never throwing: redirects are not followed (a 3xx is a failed attempt), the response body is not
 * read (the status is all that counts: 2xx is success), the address connected to is checked (address-guard.ts),
 * and the whole attempt ends after `timeoutMs`.
 */
export const postWebhook: WebhookSender = (target, headers, body, { timeoutMs, allowPrivate }) => {
  const started = performance.now();
  const done = (outcome: Omit<SendOutcome, "durationMs">): SendOutcome => ({ ...outcome, durationMs: Math.round(performance.now() - started) });
  return new Promise<SendOutcome>((resolve) => {
    let url: URL;
    try {
      url = new URL(target);
      assertPublicLiteral(url, allowPrivate);
    } catch (error) {
      resolve(done({ error: (error as Error).message }));
      return;
    }
    const transport = url.protocol === "https:" ? https : http;
    const request = transport.request(url, {
      method: "POST",
      headers: { ...headers, "content-length": Buffer.byteLength(body).toString() },
      lookup: guardedLookup(allowPrivate),
      agent: false,
    });
    const timer = setTimeout(() => request.destroy(new Error(`no response within ${timeoutMs / 1000} s`)), timeoutMs);
    request.once("response", (response) => {
      clearTimeout(timer);
      resolve(done({ statusCode: response.statusCode }));
      response.destroy();
      request.destroy();
    });
    request.once("error", (error) => {
      clearTimeout(timer);
      resolve(done({ error: error.message.slice(0, 300) }));
    });
    request.end(body);
  });
};
