import { hash, verify } from "@node-rs/argon2";
import { z } from "zod";
import type { Db } from "@/lib/db/connect";

export const USER_ROLES = ["staff", "support", "manager", "owner", "admin"] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const MIN_PASSWORD_LENGTH = 10;

export const newUserSchema = z
  .object({
    email: z.email("must be an email address").transform((e) => e.toLowerCase()),
    password: z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(200),
    role: z.enum(USER_ROLES, { error: `must be one of ${USER_ROLES.join(", ")}` }),
    accountId: z.string().min(1).nullable(),
  })
  .refine((u) => (u.role === "admin") === (u.accountId === null), {
    message: "an operator (admin) has no account; every other role needs one",
    path: ["accountId"],
  });

export type NewUser = z.infer<typeof newUserSchema>;

export class EmailTakenError extends Error {
  constructor() {
    super("a user with this email already exists");
  }
}

/**
 * Creates a sign-in user. The password is hashed with argon2id (the library's default: memory-hard,
 * 19 MiB, 2 passes), the only form it is stored in.
 */
export async function createUser(db: Pick<Db, "user">, user: NewUser): Promise<{ id: string; email: string; role: UserRole }> {
  const taken = await db.user.findUnique({ where: { email: user.email }, select: { id: true } });
  if (taken) throw new EmailTakenError();
  return db.user.create({
    data: { email: user.email, passwordHash: await hash(user.password), role: user.role, accountId: user.accountId },
    select: { id: true, email: true, role: true },
  });
}

export class WrongPasswordError extends Error {
  constructor() {
    super("the current password is not right");
  }
}

/**
 * Sets a user's password (stored as its argon2id hash only), lifts any sign-in lockout and ends every
 * session issued before (the session version moves on). False when there is no such user in the scope.
 */
export async function setPassword(db: Pick<Db, "user">, where: { id: string; accountId?: string | null }, password: string): Promise<boolean> {
  const { count } = await db.user.updateMany({
    where,
    data: { passwordHash: await hash(password), failedSignIns: 0, lockedUntil: null, sessionVersion: { increment: 1 } },
  });
  return count === 1;
}

/** One's own password change: the current password must match (argon2 verify) before the new one is set. */
export async function changeOwnPassword(db: Pick<Db, "user">, userId: string, current: string, next: string): Promise<void> {
  const user = await db.user.findUnique({ where: { id: userId }, select: { passwordHash: true } });
  const matches = user ? await verify(user.passwordHash, current).catch(() => false) : false;
  if (!matches) throw new WrongPasswordError();
  await setPassword(db, { id: userId }, next);
}

/** Lifts a sign-in lockout (and the failure count) at once; false when there is no such user in the scope. */
export async function unlockUser(db: Pick<Db, "user">, where: { id: string; accountId?: string | null }): Promise<boolean> {
  const { count } = await db.user.updateMany({ where, data: { failedSignIns: 0, lockedUntil: null } });
  return count === 1;
}
