import { captureSessionEndpoints } from "./endpoints/capture-sessions";
import { jobEndpoints } from "./endpoints/jobs";
import { petEndpoints } from "./endpoints/pets";
import { uploadEndpoints } from "./endpoints/uploads";
import type { ApiAnswer, ApiRequest } from "./exchange";
import { handleApiRequest } from "./handle-request";
import { createRouter } from "./router";

/** Every /v2 operation, in contract order. The router and the OpenAPI document both read this list. */
export const v2Endpoints = [...petEndpoints, ...captureSessionEndpoints, ...uploadEndpoints, ...jobEndpoints];

const router = createRouter(v2Endpoints);

/** The contract's path template a /v2 request names (its metrics label), or "unmatched". */
export function v2RouteOf(method: string, pathname: string): string {
  return router.match(method, pathname)?.endpoint.path ?? "unmatched";
}

export function handleV2Request(req: ApiRequest): Promise<ApiAnswer> {
  return handleApiRequest(req, router);
}
