import { hash, verify } from "@node-rs/argon2";
import type { Db } from "@/lib/db/connect";
import type { UserRole } from "@/lib/accounts/users";
import { createRateLimiter } from "@/lib/rate-limit";
import { HashingGate, SIGN_IN_POLICY, SlidingWindowLimiter, UnknownEmailLockouts, type SignInPolicy } from "./sign-in-limits";

export type SignInResult =
  | { ok: true; user: { id: string; email: string; role: UserRole; accountId: string | null; sessionVersion: number } }
  | { ok: false; reason: "invalid" | "locked" | "rate-limited" };

// A hash to verify against when the e-mail is unknown, so that the answer takes as long either way.
let dummyHash: Promise<string> | undefined;

/**
 * Takes one attempt for a user, atomically: an expired lockout is lifted, then the attempt is
 * counted only while the count is under the limit and no lockout holds. Null when the user is
 * locked (or every allowed attempt is already in flight); else the attempt's number (1..limit).
 * Counting before the password is checked is what makes the limit hold under concurrency.
 */
async function takeAttempt(db: Db, userId: string, policy: SignInPolicy): Promise<number | null> {
  const now = new Date();
  await db.user.updateMany({ where: { id: userId, lockedUntil: { lte: now } }, data: { failedSignIns: 0, lockedUntil: null } });
  const rows = await db.$queryRaw<{ failedSignIns: number }[]>`
    UPDATE "User" SET "failedSignIns" = "failedSignIns" + 1
    WHERE id = ${userId} AND "lockedUntil" IS NULL AND "failedSignIns" < ${policy.failuresBeforeLockout}
    RETURNING "failedSignIns"`;
  return rows.length > 0 ? Number(rows[0].failedSignIns) : null;
}

export class SignInService {
  private readonly byAddress: SlidingWindowLimiter;
  private readonly unknownEmails: UnknownEmailLockouts;
  /** Every password check of the process: a steady rate and a burst, whoever asks. */
  private readonly hashes;
  private readonly gate: HashingGate;

  constructor(private readonly policy: SignInPolicy = SIGN_IN_POLICY) {
    this.byAddress = new SlidingWindowLimiter(policy.attemptsPerAddress, policy.addressWindowMs);
    this.unknownEmails = new UnknownEmailLockouts(policy);
    this.hashes = createRateLimiter({ perSecond: policy.hashesPerSecond, burst: policy.hashBurst });
    this.gate = new HashingGate(policy.concurrentHashes);
  }

  async signIn(db: Db, input: { email: string; password: string; address: string }): Promise<SignInResult> {
    if (!this.byAddress.tryTake(input.address)) return { ok: false, reason: "rate-limited" };
    const email = input.email.trim().toLowerCase();
    const user = await db.user.findUnique({ where: { email } });
    const attempt = user ? await takeAttempt(db, user.id, this.policy) : this.unknownEmails.take(email);
    if (attempt === null) return { ok: false, reason: "locked" };
    // Past the process-wide budget the attempt is given back: nobody is locked out by the brake.
    if (!this.hashes.take("argon2").allowed) {
      await this.giveBack(db, user?.id, email);
      return { ok: false, reason: "rate-limited" };
    }
    dummyHash ??= hash("not a password of anyone");
    const target = user?.passwordHash ?? (await dummyHash);
    const matches = await this.gate.run(() => verify(target, input.password)).catch(() => false);
    if (user && matches) {
      await db.user.update({ where: { id: user.id }, data: { failedSignIns: 0, lockedUntil: null } });
      return { ok: true, user: { id: user.id, email: user.email, role: user.role, accountId: user.accountId, sessionVersion: user.sessionVersion } };
    }
    // The attempt that reached the limit locks; the count stays at the limit until the lockout ends.
    const locks = attempt >= this.policy.failuresBeforeLockout;
    if (locks) {
      const lockedUntil = new Date(Date.now() + this.policy.lockoutMs);
      if (user) await db.user.update({ where: { id: user.id }, data: { lockedUntil } });
      else this.unknownEmails.lock(email, lockedUntil);
    }
    return { ok: false, reason: locks ? "locked" : "invalid" };
  }

  private async giveBack(db: Db, userId: string | undefined, email: string): Promise<void> {
    if (userId) await db.user.updateMany({ where: { id: userId, failedSignIns: { gt: 0 }, lockedUntil: null }, data: { failedSignIns: { decrement: 1 } } });
    else this.unknownEmails.giveBack(email);
  }
}
