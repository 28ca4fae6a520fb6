import { z } from "zod";
import { sessionIdQuerySchema } from "@/lib/capture-sessions/schemas";
import { idDataSchema } from "@/lib/pets/schemas";
import type { ImageKind } from "@/lib/storage/images";
import { assertUploadAccepted, uploadAppearance, uploadFingerprint } from "@/lib/uploads/uploads";
import { defineEndpoint, type EndpointContext } from "../endpoint";

// Form entries are strings or File objects; duck-typed because the File class of the request's
// FormData is undici's, not necessarily the global one.
const fileSchema = z.custom<Blob>(
  (value) => typeof value === "object" && value !== null && typeof (value as Blob).arrayBuffer === "function",
  "is required and must be a file",
);

const uploadBodySchema = z.object({ file: fileSchema });

function uploadEndpoint(
  path: string,
  operationId: string,
  summary: string,
  kind: ImageKind,
  store: (db: EndpointContext["db"], accountId: string, sessionId: string, file: Blob) => Promise<{ id: string }>,
) {
  return defineEndpoint({
    method: "POST",
    path,
    operationId,
    summary,
    tag: "Uploads",
    bodyKind: "multipart",
    query: sessionIdQuerySchema,
    body: uploadBodySchema,
    successStatus: 201,
    response: idDataSchema,
    errors: ["NoSuchCaptureSessionException", "CaptureSessionAlreadyUsedError"],
    // A session that does not exist, is used or full is refused before the body is read.
    beforeBody: ({ query }, { db, accountId }) => assertUploadAccepted(db, accountId, query.sessionId, kind),
    handle: ({ query, body }, { db, accountId }) => store(db, accountId, query.sessionId, body.file),
  });
}

export const uploadEndpoints = [
  uploadEndpoint(
    "/v2/fingerprints:upload",
    "uploadFingerprint",
    "Upload one nose (fingerprint) image to a capture session (multipart field `file`, JPEG)",
    "fingerprint",
    uploadFingerprint,
  ),
  uploadEndpoint(
    "/v2/appearances:upload",
    "uploadAppearance",
    "Upload one appearance image to a capture session (multipart field `file`, JPEG)",
    "appearance",
    uploadAppearance,
  ),
];
