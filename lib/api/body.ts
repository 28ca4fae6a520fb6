import Busboy from "busboy";
import { MAX_UPLOAD_BYTES } from "@/lib/uploads/limits";
import { ApiError } from "./errors";
import { headerOf, type ApiRequest } from "./exchange";

export const MAX_JSON_BODY_BYTES = 64 * 1024;
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

// fatal: invalid UTF-8 is refused (10001), never stored as U+FFFD.
const utf8 = new TextDecoder("utf-8", { fatal: true });

export function parseJsonBody(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) return undefined;
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch {
    throw new ApiError("ValidationError", { body: ["must be valid JSON (UTF-8)"] });
  }
}

/**
 * What one multipart body may hold: the upload routes take one file and nothing else, so a body of
 * many parts (thousands of tiny ones cost seconds of parsing) is refused at the first part too many.
 */
export const MULTIPART_LIMITS = { parts: 4, files: 1, fields: 3, fieldSize: 1024, headerPairs: 16 } as const;
/** The body is fed to the parser in slices of this size, so that a refusal stops the work at once. */
const MULTIPART_SLICE_BYTES = 64 * 1024;

function malformed(reason = "malformed multipart body"): ApiError {
  return new ApiError("ValidationError", { file: [reason] });
}

/**
 * Parses a multipart body (busboy, a streaming parser) under MULTIPART_LIMITS: files as `File`s,
 * fields as strings. Stops at the first limit passed.
 */
export function parseMultipartBody(req: ApiRequest, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const type = headerOf(req, "content-type") ?? "";
  if (!type.toLowerCase().startsWith("multipart/form-data")) {
    throw new ApiError("ValidationError", { file: ["must be sent as multipart/form-data"] });
  }
  return new Promise((resolve, reject) => {
    let parser: Busboy.Busboy;
    try {
      parser = Busboy({ headers: { "content-type": type }, limits: { ...MULTIPART_LIMITS, fileSize: MAX_UPLOAD_BYTES } });
    } catch {
      return reject(malformed());
    }
    const entries: Record<string, unknown> = {};
    let failure: ApiError | undefined;
    const fail = (error: ApiError) => {
      failure ??= error;
      reject(failure);
    };
    const tooMany = () => fail(malformed(`must hold one file and at most ${MULTIPART_LIMITS.parts} parts`));
    parser.on("partsLimit", tooMany);
    parser.on("filesLimit", tooMany);
    parser.on("fieldsLimit", tooMany);
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) fail(malformed(`a field must be at most ${MULTIPART_LIMITS.fieldSize} bytes`));
      else entries[name] = value;
    });
    parser.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("limit", () => fail(new ApiError("ValidationError", { file: [`must be at most ${MAX_UPLOAD_BYTES} bytes`] })));
      stream.on("end", () => {
        entries[name] = new File(chunks as BlobPart[], info.filename ?? "file", { type: info.mimeType });
      });
    });
    parser.on("error", () => fail(malformed()));
    parser.on("close", () => (failure ? reject(failure) : resolve(entries)));
    // Sliced, so that a limit passed stops the parse within one slice.
    for (let at = 0; at < bytes.byteLength && !failure; at += MULTIPART_SLICE_BYTES) {
      parser.write(bytes.subarray(at, at + MULTIPART_SLICE_BYTES));
    }
    if (!failure) parser.end();
  });
}
