import { z } from "zod";
import { OPERATION_EXAMPLES } from "./examples";
import { v2Endpoints } from "./v2";
import { ERROR_CODES, wireCode, type ErrorName } from "./error-codes";
import { MAX_UPLOAD_BYTES } from "@/lib/uploads/limits";
import { MAX_JSON_BODY_BYTES } from "./body";
import { API_KEY_HEADER } from "./handle-request";
import type { Endpoint } from "./endpoint";
import { acceptsIdempotencyKey, IDEMPOTENCY_PARAMETER } from "./idempotency";

// The OpenAPI document is generated from the endpoint list and the same zod schemas that validate
// requests, so it cannot drift from what the server does. Served at /v2/openapi.json and committed
// as docs/openapi.json (a test keeps the two equal).

/** Errors any authenticated call can answer with. */
const COMMON_ERRORS: ErrorName[] = [
  "InvalidApiKeyException",
  "AccountApiAccessSuspended",
  "RateLimitExceededError",
  "InternalServerError",
  "ServiceUnavailableError",
];

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

function parametersOf(endpoint: Endpoint) {
  const out: JsonSchema[] = [];
  for (const [where, schema] of [["path", endpoint.params], ["query", endpoint.query]] as const) {
    if (!schema) continue;
    const json = schemaOf(schema, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      out.push({ name, in: where, required: where === "path" || (json.required ?? []).includes(name), schema: property });
    }
  }
  if (acceptsIdempotencyKey(endpoint)) out.push({ ...IDEMPOTENCY_PARAMETER });
  return out;
}

function requestBodyOf(endpoint: Endpoint): JsonSchema | undefined {
  if (endpoint.bodyKind === "multipart") {
    return {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object",
            required: ["file"],
            properties: { file: { type: "string", format: "binary", description: `One JPEG image, at most ${MAX_UPLOAD_BYTES} bytes` } },
          },
        },
      },
    };
  }
  if (endpoint.bodyKind === "json" && endpoint.body) {
    return {
      required: true,
      description: `JSON, at most ${MAX_JSON_BODY_BYTES} bytes; unknown fields are ignored`,
      content: { "application/json": { schema: schemaOf(endpoint.body, "input"), example: OPERATION_EXAMPLES[endpoint.operationId]?.body } },
    };
  }
  return undefined;
}

function errorResponses(endpoint: Endpoint) {
  const names = [...new Set<ErrorName>([...COMMON_ERRORS, ...(endpoint.bodyKind || endpoint.query ? (["ValidationError"] as ErrorName[]) : []), ...endpoint.errors])];
  const byStatus = new Map<number, ErrorName[]>();
  for (const name of names) byStatus.set(ERROR_CODES[name].status, [...(byStatus.get(ERROR_CODES[name].status) ?? []), name]);
  return Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, list]) => [
      String(status),
      {
        description: list.map((n) => `${wireCode(n)} ${n}`).join("; "),
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" }, example: { errors: [{ code: wireCode(list[0]) }] } } },
      },
    ]),
  );
}

function successResponse(endpoint: Endpoint) {
  if (endpoint.successStatus === 204) return { "204": { description: "Deleted, no body" } };
  const data = endpoint.response ? schemaOf(endpoint.response, "output") : {};
  return {
    [String(endpoint.successStatus)]: {
      description: endpoint.successStatus === 202 ? "Accepted; the job started" : endpoint.successStatus === 201 ? "Created" : "Success",
      content: {
        "application/json": {
          schema: { type: "object", required: ["success", "data"], properties: { success: { const: true }, data }, additionalProperties: false },
          example: { success: true, data: OPERATION_EXAMPLES[endpoint.operationId]?.data },
        },
      },
    },
  };
}

export function buildOpenApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of v2Endpoints) {
    const parameters = parametersOf(endpoint);
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = {
      operationId: endpoint.operationId,
      summary: endpoint.summary,
      tags: [endpoint.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(requestBodyOf(endpoint) ? { requestBody: requestBodyOf(endpoint) } : {}),
      responses: { ...successResponse(endpoint), ...errorResponses(endpoint) },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Rhinarium pet biometric registry API",
      version: "2",
      description:
        "Pet profiles, capture sessions, nose and appearance image uploads, and asynchronous registration, " +
        "verification (1:1) and identification (1:N) jobs. See the README (API notes) for every choice the contract leaves open.",
    },
    servers: [{ url: "/", description: "The server that serves this document" }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: "apiKey", in: "header", name: API_KEY_HEADER } },
      schemas: {
        ErrorResponse: {
          type: "object",
          required: ["errors"],
          properties: {
            errors: {
              type: "array",
              items: {
                type: "object",
                required: ["code"],
                properties: {
                  code: { type: "string", pattern: "^SERVICEB2B\\d{5}$" },
                  details: { type: "object", additionalProperties: { type: "array", items: { type: "string" } }, description: "Only for 10001" },
                },
              },
            },
          },
        },
      },
    },
    "x-error-codes": Object.entries(ERROR_CODES).map(([name, e]) => ({
      code: wireCode(name as ErrorName),
      name,
      status: e.status,
      description: e.description,
      reachable: e.reachable,
      ...("why" in e ? { why: e.why } : {}),
    })),
  };
}
