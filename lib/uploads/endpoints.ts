import { z } from "zod";
import { defineEndpoint } from "@/lib/api/endpoint";
import { sessionIdQuerySchema } from "@/lib/capture-sessions/schemas";
import { idDataSchema } from "@/lib/pets/schemas";
import { uploadAppearance, uploadFingerprint } from "./uploads";

// Form entries are strings or File objects; duck-typed because the File class of the request's
// FormData is undici's, not necessarily the global one.
const fileSchema = z.custom<Blob>(
  (value) => typeof value === "object" && value !== null && typeof (value as Blob).arrayBuffer === "function",
  "is required and must be a file",
);

const uploadBodySchema = z.object({ file: fileSchema });

const common = {
  method: "POST" as const,
  tag: "Uploads",
  bodyKind: "multipart" as const,
  query: sessionIdQuerySchema,
  body: uploadBodySchema,
  successStatus: 201 as const,
  response: idDataSchema,
  errors: ["NoSuchCaptureSessionException", "CaptureSessionAlreadyUsedError"] as const,
};

export const uploadEndpoints = [
  defineEndpoint({
    ...common,
    errors: [...common.errors],
    path: "/v2/fingerprints:upload",
    operationId: "uploadFingerprint",
    summary: "Upload one nose (fingerprint) image to a capture session (multipart field `file`, JPEG)",
    handle: ({ query, body }, { db, accountId }) => uploadFingerprint(db, accountId, query.sessionId, body.file),
  }),
  defineEndpoint({
    ...common,
    errors: [...common.errors],
    path: "/v2/appearances:upload",
    operationId: "uploadAppearance",
    summary: "Upload one appearance image to a capture session (multipart field `file`, JPEG)",
    handle: ({ query, body }, { db, accountId }) => uploadAppearance(db, accountId, query.sessionId, body.file),
  }),
];
