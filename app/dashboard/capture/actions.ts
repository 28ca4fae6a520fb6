"use server";

import { createCaptureSessionAction, jobProgressAction, startCaptureJobAction, uploadCaptureImageAction } from "@/lib/dashboard/capture";
import { runAction } from "@/lib/dashboard/run-action";

export async function createCaptureSession(input: unknown) {
  return runAction(createCaptureSessionAction, input);
}

/** Multipart: the file travels as FormData; the chain validates the fields like any other input. */
export async function uploadCaptureImage(form: FormData) {
  return runAction(uploadCaptureImageAction, { sessionId: form.get("sessionId"), kind: form.get("kind"), file: form.get("file") });
}

export async function startCaptureJob(input: unknown) {
  return runAction(startCaptureJobAction, input);
}

export async function getJobProgress(input: unknown) {
  return runAction(jobProgressAction, input);
}
