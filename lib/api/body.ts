import { ApiError } from "./errors";
import { headerOf, type ApiRequest } from "./exchange";

export const MAX_JSON_BODY_BYTES = 64 * 1024;
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
/** Room for the multipart boundaries and headers around the file. */
const MULTIPART_OVERHEAD_BYTES = 16 * 1024;

export function maxBodyBytes(kind: "json" | "multipart"): number {
  return kind === "json" ? MAX_JSON_BODY_BYTES : MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD_BYTES;
}

function tooLarge(kind: "json" | "multipart", limit: number): ApiError {
  const field = kind === "json" ? "body" : "file";
  return new ApiError("ValidationError", { [field]: [`must be at most ${limit} bytes`] });
}

/**
 * Reads the body, refusing early when the declared length is too large and stopping as soon as the
 * received bytes pass the cap (a chunked request declares no length).
 */
export async function readCappedBody(req: ApiRequest, kind: "json" | "multipart"): Promise<Uint8Array> {
  const limit = maxBodyBytes(kind);
  const declared = Number(headerOf(req, "content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(kind, kind === "json" ? limit : MAX_UPLOAD_BYTES);
  let bytes: Uint8Array | null;
  try {
    bytes = await req.readBody(limit);
  } catch {
    // The client closed the connection before sending the length it declared.
    throw new ApiError("ValidationError", { [kind === "json" ? "body" : "file"]: ["the request body ended before its declared length"] });
  }
  if (bytes === null) throw tooLarge(kind, kind === "json" ? limit : MAX_UPLOAD_BYTES);
  return bytes;
}

const utf8 = new TextDecoder();

export function parseJsonBody(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) return undefined;
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch {
    throw new ApiError("ValidationError", { body: ["must be valid JSON"] });
  }
}

export async function parseMultipartBody(req: ApiRequest, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const type = headerOf(req, "content-type") ?? "";
  if (!type.toLowerCase().startsWith("multipart/form-data")) {
    throw new ApiError("ValidationError", { file: ["must be sent as multipart/form-data"] });
  }
  try {
    const form = await new Response(bytes as BodyInit, { headers: { "content-type": type } }).formData();
    return Object.fromEntries(form.entries());
  } catch {
    throw new ApiError("ValidationError", { file: ["malformed multipart body"] });
  }
}
