import { z } from "zod";
import { acceptInvitation, INVITATION_INVALID_MESSAGE, InvitationInvalidError, invitationOf } from "@/lib/accounts/invitations";
import { MIN_PASSWORD_LENGTH } from "@/lib/accounts/users";
import { getDb } from "@/lib/db";
import { failure, fieldErrors, type ActionResult } from "./action-client";

// The invitation page's service (/invite/<token>): no session exists, so, like the first run, it is outside the
// signed-in chain; the link's secret is what admits its holder.

const token = z.string().regex(/^[A-Za-z0-9_-]{20,100}$/);

/** What the page says for a link it cannot accept: the words acceptInvitationAction answers with. */
export { INVITATION_INVALID_MESSAGE };

/** What the page shows, or null for a link that is malformed, unknown, used, withdrawn or expired. */
export async function invitationForPage(raw: string) {
  const parsed = token.safeParse(raw);
  return parsed.success ? invitationOf(await getDb(), parsed.data) : null;
}

const acceptSchema = z
  .object({
    token,
    password: z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(200),
    confirm: z.string().max(200),
  })
  .refine((input) => input.password === input.confirm, { message: "does not match the password", path: ["confirm"] });

export async function acceptInvitationAction(raw: unknown): Promise<ActionResult<{ email: string }>> {
  const parsed = acceptSchema.safeParse(raw);
  if (!parsed.success) return failure("Some fields are not valid.", fieldErrors(parsed.error));
  try {
    return { ok: true, data: await acceptInvitation(await getDb(), parsed.data.token, parsed.data.password) };
  } catch (error) {
    if (error instanceof InvitationInvalidError) return failure(error.message);
    throw error;
  }
}
