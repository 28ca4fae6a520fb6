import { buildOpenApiDocument } from "./openapi";

// Public: the document describes the contract, not any account's data.
export function serveOpenApiDocument(): Response {
  return Response.json(buildOpenApiDocument());
}
