"use server";

import { revalidatePath } from "next/cache";
import {
  addWebhookEndpointAction,
  deleteWebhookEndpointAction,
  rotateWebhookSecretAction,
  sendWebhookTestAction,
  setWebhookEndpointEnabledAction,
} from "@/lib/dashboard/webhooks";
import { runAction } from "@/lib/dashboard/run-action";

async function andRefresh<T extends { ok: boolean }>(result: Promise<T>): Promise<T> {
  const answer = await result;
  if (answer.ok) revalidatePath("/dashboard/webhooks");
  return answer;
}

export async function addWebhookEndpoint(input: unknown) {
  return andRefresh(runAction(addWebhookEndpointAction, input));
}
export async function setWebhookEndpointEnabled(input: unknown) {
  return andRefresh(runAction(setWebhookEndpointEnabledAction, input));
}
export async function deleteWebhookEndpoint(input: unknown) {
  return andRefresh(runAction(deleteWebhookEndpointAction, input));
}
export async function rotateWebhookSecret(input: unknown) {
  return andRefresh(runAction(rotateWebhookSecretAction, input));
}
export async function sendWebhookTest(input: unknown) {
  return andRefresh(runAction(sendWebhookTestAction, input));
}
