"use server";

import {
  addWebhookEndpointAction,
  deleteWebhookEndpointAction,
  rotateWebhookSecretAction,
  sendWebhookTestAction,
  setWebhookEndpointEnabledAction,
} from "@/lib/dashboard/webhooks";
import { runActionAndRefresh } from "@/lib/dashboard/run-action";

const PAGE = "/dashboard/webhooks";

export async function addWebhookEndpoint(input: unknown) {
  return runActionAndRefresh(addWebhookEndpointAction, input, PAGE);
}
export async function setWebhookEndpointEnabled(input: unknown) {
  return runActionAndRefresh(setWebhookEndpointEnabledAction, input, PAGE);
}
export async function deleteWebhookEndpoint(input: unknown) {
  return runActionAndRefresh(deleteWebhookEndpointAction, input, PAGE);
}
export async function rotateWebhookSecret(input: unknown) {
  return runActionAndRefresh(rotateWebhookSecretAction, input, PAGE);
}
export async function sendWebhookTest(input: unknown) {
  return runActionAndRefresh(sendWebhookTestAction, input, PAGE);
}
