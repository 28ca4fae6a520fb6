import { z } from "zod";
import { findActiveApiKey, touchApiKey } from "@/lib/accounts/api-keys";
import { getDb } from "@/lib/db";
import type { Db } from "@/lib/db/connect";
import { logError } from "@/lib/log";
import { parseJsonBody, parseMultipartBody, readCappedBody } from "./body";
import type { Endpoint } from "./endpoint";
import { ApiError, errorResponse, type ValidationDetails } from "./errors";
import { recordApiCall } from "./metering";
import type { createRouter } from "./router";

export const API_KEY_HEADER = "x-service-api-key";

function collectIssues(details: ValidationDetails, source: string, error: z.ZodError): void {
  for (const issue of error.issues) {
    const key = issue.path.length > 0 ? issue.path.join(".") : source;
    (details[key] ??= []).push(issue.message);
  }
}

async function validateInput(req: Request, endpoint: Endpoint, params: Record<string, string>) {
  const url = new URL(req.url);
  const raw = {
    query: Object.fromEntries(url.searchParams.entries()),
    params,
    body: undefined as unknown,
  };
  if (endpoint.bodyKind) {
    const bytes = await readCappedBody(req, endpoint.bodyKind);
    raw.body = endpoint.bodyKind === "json" ? parseJsonBody(bytes) : await parseMultipartBody(req, bytes);
  }
  const details: ValidationDetails = {};
  const input: Record<string, unknown> = {};
  for (const source of ["query", "params", "body"] as const) {
    const schema = endpoint[source];
    if (!schema) continue;
    const parsed = schema.safeParse(raw[source]);
    if (parsed.success) input[source] = parsed.data;
    else collectIssues(details, source, parsed.error);
  }
  if (Object.keys(details).length > 0) throw new ApiError("ValidationError", details);
  return input as Parameters<Endpoint["handle"]>[0];
}

/**
 * The one wrapper every /v2 call goes through: authenticate the key, refuse suspended accounts,
 * cap and validate the input, run the handler, shape the envelope, and meter the call.
 */
export async function handleApiRequest(req: Request, router: ReturnType<typeof createRouter>): Promise<Response> {
  const started = performance.now();
  const pathname = new URL(req.url).pathname;
  const match = router.match(req.method, pathname);
  const record = { accountId: null as string | null, apiKeyId: null as string | null };
  let db: Db | undefined;
  let response: Response;
  try {
    db = await getDb();
    const key = await findActiveApiKey(db, req.headers.get(API_KEY_HEADER));
    if (!key) throw new ApiError("InvalidApiKeyException");
    record.accountId = key.accountId;
    record.apiKeyId = key.id;
    void touchApiKey(db, key).catch((error) => logError("api-key-touch-failed", error));
    if (key.account.suspended) throw new ApiError("AccountApiAccessSuspended");
    // Authenticated before the 404 so that an unauthenticated caller cannot map the surface.
    if (!match) throw new ApiError("RouteNotFoundError");
    const input = await validateInput(req, match.endpoint, match.params);
    const data = await match.endpoint.handle(input, { db, accountId: key.accountId, account: key.account, apiKeyId: key.id });
    const status = match.endpoint.successStatus;
    response = status === 204 ? new Response(null, { status }) : Response.json({ success: true, data }, { status });
  } catch (error) {
    if (error instanceof ApiError) {
      response = errorResponse(error.errorName, error.details);
    } else {
      logError("api-unhandled-error", error, { method: req.method, path: pathname });
      response = errorResponse("InternalServerError");
    }
  }
  if (db) {
    void recordApiCall(db, {
      ...record,
      method: req.method,
      route: match ? `${match.endpoint.method} ${match.endpoint.path}` : "UNMATCHED",
      status: response.status,
      latencyMs: Math.round(performance.now() - started),
    });
  }
  return response;
}
