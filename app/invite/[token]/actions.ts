"use server";

import { acceptInvitationAction } from "@/lib/dashboard/invitation-page";

export async function acceptInvitation(input: unknown) {
  return acceptInvitationAction(input);
}
