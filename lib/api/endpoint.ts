import type { z } from "zod";
import type { Db } from "@/lib/db/connect";
import type { AuthenticatedKey } from "@/lib/accounts/api-keys";
import type { ErrorName } from "./error-codes";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

export interface EndpointContext {
  db: Db;
  accountId: string;
  account: AuthenticatedKey["account"];
  apiKeyId: string;
}

type Input<B, Q, P> = { body: B; query: Q; params: P };

/**
 * Everything the wrapper needs to serve one operation, and everything the OpenAPI generator needs
 * to describe it: the handler never sees an unauthenticated request or an unvalidated input.
 */
export interface Endpoint<B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType> {
  method: HttpMethod;
  /** Contract path template, e.g. "/v2/pets/{petId}:verify". */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  bodyKind?: "json" | "multipart";
  body?: B;
  query?: Q;
  params?: P;
  successStatus: 200 | 201 | 202 | 204;
  /** Schema of `data` in the success envelope (absent for 204). */
  response?: z.ZodType;
  /** Error names this operation can answer with besides the ones every call can (10000, 10001, 10010, 500). */
  errors: ErrorName[];
  /**
   * Checks that need only the query and path (e.g. the capture session exists), run before the body
   * is read: a request that will be refused costs no body parse.
   */
  beforeBody?(input: { query: z.infer<Q>; params: z.infer<P> }, ctx: EndpointContext): Promise<void>;
  /**
   * Changes worth the account's audit log (pets created, changed, deleted; jobs started): written
   * after the call succeeded, with the key as the actor. Reads and uploads are metered, not audited.
   */
  audit?: { action: string; target(input: Input<z.infer<B>, z.infer<Q>, z.infer<P>>, data: unknown): string | null; data?(input: Input<z.infer<B>, z.infer<Q>, z.infer<P>>): Record<string, string | null> };
  /** The answer's data, or a promise of it (a read answered from memory needs none). */
  handle(input: Input<z.infer<B>, z.infer<Q>, z.infer<P>>, ctx: EndpointContext): unknown;
}

export function defineEndpoint<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  endpoint: Endpoint<B, Q, P>,
): Endpoint {
  return endpoint as unknown as Endpoint;
}
