import { z } from "zod";
import { serverApiKeyCache } from "@/lib/accounts/api-key-cache";
import { touchApiKey, type AuthenticatedKey } from "@/lib/accounts/api-keys";
import { recordAudit } from "@/lib/accounts/audit";
import { getDb, openedDb } from "@/lib/db";
import { nextCheckPhase } from "@/lib/db/notified-cache";
import type { Db } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { DomainError } from "@/lib/domain-errors";
import { logError } from "@/lib/log";
import { parseJsonBody, parseMultipartBody, readCappedBody } from "./body";
import type { Endpoint, EndpointContext } from "./endpoint";
import { ApiError, domainErrorAnswer, errorAnswer, type ValidationDetails } from "./errors";
import { headerOf, splitTarget, successAnswer, type ApiAnswer, type ApiRequest } from "./exchange";
import { acceptsIdempotencyKey, claimIdempotencyKey, IDEMPOTENCY_HEADER, idempotencyKeyOf, requestFingerprint, settleIdempotencyKey } from "./idempotency";
import { recordApiCall } from "./metering";
import { createRateLimiter } from "@/lib/rate-limit";
import type { createRouter } from "./router";
import { processWide } from "@/lib/process-state";

export const API_KEY_HEADER = "x-service-api-key";
/** The first retry delay suggested with a 503 (the client's own backoff then takes over). */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

type RateLimiter = ReturnType<typeof createRateLimiter>;
// The process's limiters (lib/process-state.ts), like the database client: API calls per key, and key
// lookups that miss the key cache per client address (see API_KEY_LOOKUPS_PER_SECOND).
function rateLimiters() {
  return processWide("rateLimiters", (): { calls: RateLimiter; keyLookups: RateLimiter } => {
    const env = readEnv();
    return {
      calls: createRateLimiter({ perSecond: env.API_RATE_LIMIT_PER_SECOND, burst: env.API_RATE_LIMIT_BURST }),
      keyLookups: createRateLimiter({ perSecond: env.API_KEY_LOOKUPS_PER_SECOND, burst: env.API_KEY_LOOKUP_BURST }),
    };
  });
}

/**
 * PostgreSQL text cannot hold U+0000: a NUL anywhere in the input would fail in the database as a
 * 500. No valid id, enum or JSON text needs one, so it is a validation error at the door. Iterative:
 * a 64 KiB body can nest 30,000 levels deep, so a nested NUL is reported under its top-level field.
 */
function findNulFields(root: unknown, rootName: string): string[] {
  const found: string[] = [];
  const stack: [unknown, string][] = [[root, rootName]];
  while (stack.length > 0) {
    const [value, at] = stack.pop()!;
    if (typeof value === "string") {
      if (value.includes("\u0000")) found.push(at);
    } else if (value && typeof value === "object" && typeof (value as Blob).arrayBuffer !== "function") {
      for (const [k, v] of Object.entries(value)) stack.push([v, at === "" ? k : at]);
    }
  }
  return [...new Set(found)];
}

/** Nothing to report, seen without allocating: no value, or a flat record of NUL-free strings (path parameters, a query). */
function plainlyNulFree(value: unknown): boolean {
  if (value === undefined) return true;
  if (!value || typeof value !== "object") return false;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (typeof v !== "string" || v.includes("\u0000")) return false;
  }
  return true;
}

function collectIssues(details: ValidationDetails, source: string, error: z.ZodError): void {
  for (const issue of error.issues) {
    const key = issue.path.length > 0 ? issue.path.join(".") : source;
    (details[key] ??= []).push(issue.message);
  }
}

const NO_QUERY: Readonly<Record<string, string>> = Object.freeze({});
const INPUT_SOURCES = ["query", "params", "body"] as const;

type RawInput = { query: Readonly<Record<string, string>>; params: Record<string, string>; body: unknown };
type EndpointInput = Parameters<Endpoint["handle"]>[0];

/**
 * The endpoint's validated input. An endpoint without a body is validated at once, without a
 * promise (every GET); one with a body waits for it first.
 */
function validateInput(req: ApiRequest, search: string, endpoint: Endpoint, params: Record<string, string>, ctx: EndpointContext): EndpointInput | Promise<EndpointInput> {
  const raw: RawInput = {
    query: search === "" ? NO_QUERY : Object.fromEntries(new URLSearchParams(search).entries()),
    params,
    body: undefined,
  };
  return endpoint.bodyKind ? withBody(req, endpoint, raw, ctx) : checkInput(endpoint, raw);
}

/** The query and path first, then the endpoint's own checks, and only then the body is read and parsed. */
async function withBody(req: ApiRequest, endpoint: Endpoint, raw: RawInput, ctx: EndpointContext): Promise<EndpointInput> {
  if (endpoint.beforeBody) {
    const early = checkInput(endpoint, raw, ["query", "params"]);
    await endpoint.beforeBody(early as { query: unknown; params: unknown }, ctx);
  }
  const bytes = await readCappedBody(req, endpoint.bodyKind!);
  raw.body = endpoint.bodyKind === "json" ? parseJsonBody(bytes) : await parseMultipartBody(req, bytes);
  return checkInput(endpoint, raw);
}

function checkInput(endpoint: Endpoint, raw: RawInput, sources: readonly (typeof INPUT_SOURCES)[number][] = INPUT_SOURCES): EndpointInput {
  const details: ValidationDetails = {};
  if (!(plainlyNulFree(raw.query) && plainlyNulFree(raw.params) && plainlyNulFree(raw.body))) {
    const nulFields = INPUT_SOURCES.flatMap((source) => findNulFields(raw[source], ""));
    for (const field of nulFields) (details[field || "body"] ??= []).push("must not contain NUL characters");
    if (nulFields.length > 0) throw new ApiError("ValidationError", details);
  }
  const input: Record<string, unknown> = {};
  let invalid = false;
  for (const source of sources) {
    const schema = endpoint[source];
    if (!schema) continue;
    const parsed = schema.safeParse(raw[source]);
    if (parsed.success) input[source] = parsed.data;
    else {
      collectIssues(details, source, parsed.error);
      invalid = true;
    }
  }
  if (invalid) throw new ApiError("ValidationError", details);
  return input as EndpointInput;
}

/** A promise or any thenable (a Prisma query returned as it is), which the wrapper awaits; else a value. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}

/** Writes a successful change to the account's audit log, the key as its actor; like metering, never delays or fails the answer. */
function auditApiChange(db: Db, key: AuthenticatedKey, audit: NonNullable<Endpoint["audit"]>, input: EndpointInput, data: unknown): void {
  let target: string | null;
  let details: Record<string, string | null>;
  try {
    target = audit.target(input, data);
    details = audit.data?.(input) ?? {};
  } catch (error) {
    logError("api-audit-failed", error, { action: audit.action });
    return;
  }
  recordAudit(db, { kind: "api-key", prefix: key.prefix, name: key.name }, { action: audit.action, accountId: key.accountId, target, data: details }).catch((error) =>
    logError("api-audit-failed", error, { action: audit.action }),
  );
}

/**
 * A create or start call (POST with a JSON body) sent with an Idempotency-Key: the first call's
 * answer to replay, or null to run it (having claimed the key, handed to `claimed`).
 */
async function claimIdempotency(req: ApiRequest, endpoint: Endpoint, input: EndpointInput, ctx: EndpointContext, claimed: (key: string) => void): Promise<ApiAnswer | null> {
  if (!acceptsIdempotencyKey(endpoint)) return null;
  const key = idempotencyKeyOf(headerOf(req, IDEMPOTENCY_HEADER));
  if (key === undefined) return null;
  const replay = await claimIdempotencyKey(ctx.db, ctx.accountId, key, requestFingerprint(req.method, req.target, input));
  if (!replay) claimed(key);
  return replay;
}

/**
 * The one wrapper every /v2 call goes through: authenticate the key, refuse suspended accounts,
 * cap and validate the input, run the handler, shape the envelope, and meter the call.
 */
export async function handleApiRequest(req: ApiRequest, router: ReturnType<typeof createRouter>): Promise<ApiAnswer> {
  const started = performance.now();
  const { pathname, search } = splitTarget(req.target);
  const match = router.match(req.method, pathname);
  let db: Db | undefined;
  let caller: { accountId: string; id: string } | undefined;
  let idempotencyKey: string | undefined;
  let response: ApiAnswer;
  try {
    // One wait per call for the check phase of this turn (notifications read with the request are
    // applied by then); the caches are then read without a promise when they hold the answer.
    await nextCheckPhase();
    db = openedDb() ?? (await getDb());
    const presented = headerOf(req, API_KEY_HEADER) ?? null;
    const keys = serverApiKeyCache();
    const known = keys.cached(presented);
    if (known === undefined) {
      const lookup = rateLimiters().keyLookups.take(req.client ?? "in-process");
      if (!lookup.allowed) throw new ApiError("RateLimitExceededError", undefined, lookup.retryAfterSeconds);
    }
    const key = known !== undefined ? known : await keys.find(db, presented);
    if (!key) throw new ApiError("InvalidApiKeyException");
    caller = key;
    touchApiKey(db, key)?.catch((error) => logError("api-key-touch-failed", error));
    const rate = rateLimiters().calls.take(key.id);
    if (!rate.allowed) throw new ApiError("RateLimitExceededError", undefined, rate.retryAfterSeconds);
    if (key.account.suspended) throw new ApiError("AccountApiAccessSuspended");
    // Authenticated before the 404 so that an unauthenticated caller cannot map the surface.
    if (!match) throw new ApiError("RouteNotFoundError");
    const ctx: EndpointContext = { db, accountId: key.accountId, account: key.account, apiKeyId: key.id };
    const validated = validateInput(req, search, match.endpoint, match.params, ctx);
    const input = validated instanceof Promise ? await validated : validated;
    const replay = await claimIdempotency(req, match.endpoint, input, ctx, (claimed) => (idempotencyKey = claimed));
    if (replay) response = replay;
    else {
      const handled = match.endpoint.handle(input, ctx);
      const data = isThenable(handled) ? await handled : handled;
      const status = match.endpoint.successStatus;
      if (match.endpoint.audit) auditApiChange(db, key, match.endpoint.audit, input, data);
      response = status === 204 ? { status, headers: {}, body: null } : successAnswer(status, data);
    }
  } catch (error) {
    if (error instanceof ApiError) {
      response = errorAnswer(error.errorName, error.details, error.retryAfterSeconds);
    } else if (error instanceof DomainError) {
      response = domainErrorAnswer(error);
    } else if (isDatabaseUnavailable(error)) {
      logError("api-database-unavailable", error, { method: req.method, path: pathname });
      response = errorAnswer("ServiceUnavailableError", undefined, UNAVAILABLE_RETRY_AFTER_SECONDS);
    } else {
      logError("api-unhandled-error", error, { method: req.method, path: pathname });
      response = errorAnswer("InternalServerError");
    }
  }
  if (db && caller && idempotencyKey !== undefined) {
    await settleIdempotencyKey(db, caller.accountId, idempotencyKey, response).catch((error) => logError("idempotency-settle-failed", error));
  }
  if (db) {
    recordApiCall(db, {
      accountId: caller ? caller.accountId : null,
      apiKeyId: caller ? caller.id : null,
      method: req.method,
      route: match ? match.route : "UNMATCHED",
      status: response.status,
      latencyMs: Math.round(performance.now() - started),
    });
  }
  return response;
}
