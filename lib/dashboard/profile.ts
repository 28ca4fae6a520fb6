import { z } from "zod";
import { recordAudit } from "@/lib/accounts/audit";
import { changeOwnPassword, MIN_PASSWORD_LENGTH, WrongPasswordError } from "@/lib/accounts/users";
import { DashboardError, userAction } from "./action-client";

// The signed-in user's own sign-in: changing their password (every role, operators included).

const newPassword = z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(200);

/** Needs the current password; every session, this one included, ends afterwards (sign in again with the new one). */
export const changePasswordAction = userAction({
  capability: "profile:manage",
  input: z
    .object({ current: z.string().min(1, "enter your current password").max(200), password: newPassword, confirm: z.string().max(200) })
    .refine((v) => v.password === v.confirm, { message: "does not match the new password", path: ["confirm"] })
    .refine((v) => v.password !== v.current, { message: "must differ from the current password", path: ["password"] }),
  async run(ctx, input) {
    await changeOwnPassword(ctx.db, ctx.user.id, input.current, input.password).catch((error) => {
      throw error instanceof WrongPasswordError ? new DashboardError("The current password is not right.") : error;
    });
    await recordAudit(ctx.db, { kind: "user", userId: ctx.user.id, email: ctx.user.email }, {
      action: "user.password",
      accountId: ctx.user.accountId,
      target: ctx.user.id,
    });
    return { userId: ctx.user.id };
  },
});
