import { hash } from "@node-rs/argon2";
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
