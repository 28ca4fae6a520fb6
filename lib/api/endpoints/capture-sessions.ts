import { idDataSchema } from "@/lib/pets/schemas";
import { createCaptureSessionBodySchema } from "@/lib/capture-sessions/schemas";
import { createCaptureSession } from "@/lib/capture-sessions/sessions";
import { defineEndpoint } from "../endpoint";

export const captureSessionEndpoints = [
  defineEndpoint({
    method: "POST",
    path: "/v2/capture-sessions",
    operationId: "createCaptureSession",
    summary: "Create a capture session",
    tag: "Capture sessions",
    bodyKind: "json",
    body: createCaptureSessionBodySchema,
    successStatus: 201,
    response: idDataSchema,
    errors: ["NoPetIdCaptureSessionException", "NoSuchPetException"],
    handle: ({ body }, { db, accountId }) => createCaptureSession(db, accountId, body),
  }),
];
