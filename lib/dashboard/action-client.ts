import { z } from "zod";
import { ERROR_CODES } from "@/lib/api/error-codes";
import { errorNameOf } from "@/lib/api/errors";
import { can, type Capability } from "@/lib/auth/roles";
import type { SessionUser } from "@/lib/auth/session";
import type { Db } from "@/lib/db/connect";
import { DomainError } from "@/lib/domain-errors";
import { logError } from "@/lib/log";

// The one chain every dashboard server action goes through (after Dub's safe-action): who is signed
// in, whether their role may do this, the input validated by zod, the account scope put in the
// context, and expected failures turned into typed values the UI shows inline. Bugs are logged and
// answered with a generic message, never a stack trace.

export type ActionResult<T> =
  | { ok: true; data: T }
  | { ok: false; error: { message: string; fields?: Record<string, string[]> } };

/** An expected failure with a message for the person at the screen. */
export class DashboardError extends Error {}

export interface AccountActionContext {
  db: Db;
  user: SessionUser;
  /** Every query of an account-scoped action filters on this; it comes from the session, never the input. */
  accountId: string;
  /** Where the signed-in user reached the dashboard (scheme, host, port): links in e-mails point there. Read when asked. */
  origin: () => Promise<string>;
}

export interface OperatorActionContext {
  db: Db;
  user: SessionUser;
}

interface ActionBase<S extends z.ZodType> {
  capability: Capability;
  input: S;
}

export interface AccountAction<S extends z.ZodType, T> extends ActionBase<S> {
  scope: "account";
  /**
   * Uses the service as an API call would (creates pets, captures, uploads, runs jobs): refused while
   * the account is suspended, as the API refuses every call (10010).
   */
  usesService?: boolean;
  run(ctx: AccountActionContext, input: z.infer<S>): Promise<T>;
}

/** For operators (admin): acts across accounts, so the capability must be an operator's. */
export interface OperatorAction<S extends z.ZodType, T> extends ActionBase<S> {
  scope: "operator";
  run(ctx: OperatorActionContext, input: z.infer<S>): Promise<T>;
}

/** For the signed-in user themself, whatever their role and account (their own password). */
export interface UserAction<S extends z.ZodType, T> extends ActionBase<S> {
  scope: "user";
  run(ctx: OperatorActionContext, input: z.infer<S>): Promise<T>;
}

export type DashboardAction<S extends z.ZodType, T> = AccountAction<S, T> | OperatorAction<S, T> | UserAction<S, T>;

export function accountAction<S extends z.ZodType, T>(action: Omit<AccountAction<S, T>, "scope">): AccountAction<S, T> {
  return { ...action, scope: "account" };
}

export function operatorAction<S extends z.ZodType, T>(action: Omit<OperatorAction<S, T>, "scope">): OperatorAction<S, T> {
  return { ...action, scope: "operator" };
}

export function userAction<S extends z.ZodType, T>(action: Omit<UserAction<S, T>, "scope">): UserAction<S, T> {
  return { ...action, scope: "user" };
}

const NOT_ALLOWED = "You are not allowed to do this.";

export function fieldErrors(error: z.ZodError): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const issue of error.issues) (fields[issue.path.join(".") || "input"] ??= []).push(issue.message);
  return fields;
}

export function failure(message: string, fields?: Record<string, string[]>): ActionResult<never> {
  return { ok: false, error: fields ? { message, fields } : { message } };
}

async function isSuspended(db: Db, accountId: string): Promise<boolean> {
  const account = await db.account.findUnique({ where: { id: accountId }, select: { suspended: true } });
  return account?.suspended === true;
}

/** Runs an action for a user already resolved from the session (or null): the testable core of the chain. */
export async function invokeAction<S extends z.ZodType, T>(
  action: DashboardAction<S, T>,
  db: Db,
  user: SessionUser | null,
  raw: unknown,
  origin: () => Promise<string> = async () => "http://localhost",
): Promise<ActionResult<T>> {
  if (!user) return failure("Your session has ended: sign in again.");
  if (!can(user.role, action.capability)) return failure(NOT_ALLOWED);
  if (action.scope === "account" && action.usesService && user.accountId && (await isSuspended(db, user.accountId))) {
    return failure(ERROR_CODES.AccountApiAccessSuspended.description + ".");
  }
  const parsed = action.input.safeParse(raw);
  if (!parsed.success) return failure("Some fields are not valid.", fieldErrors(parsed.error));
  try {
    if (action.scope === "account") {
      if (!user.accountId) return failure(NOT_ALLOWED);
      return { ok: true, data: await action.run({ db, user, accountId: user.accountId, origin }, parsed.data) };
    }
    return { ok: true, data: await action.run({ db, user }, parsed.data) };
  } catch (error) {
    if (error instanceof DashboardError) return failure(error.message);
    if (error instanceof DomainError) {
      if (error.details) return failure("Some fields are not valid.", error.details);
      return failure(ERROR_CODES[errorNameOf(error.failure)].description + ".");
    }
    logError("dashboard-action-failed", error, { userId: user.id });
    return failure("Something went wrong on our side. Try again; if it persists, contact support.");
  }
}
