import { hash, verify } from "@node-rs/argon2";
import type { Db } from "@/lib/db/connect";
import type { UserRole } from "@/lib/accounts/users";
import { afterFailure, isLocked, SIGN_IN_POLICY, SlidingWindowLimiter, UnknownEmailLockouts, type SignInPolicy } from "./sign-in-limits";

export type SignInResult =
  | { ok: true; user: { id: string; email: string; role: UserRole; accountId: string | null } }
  | { ok: false; reason: "invalid" | "locked" | "rate-limited" };

// A hash to verify against when the e-mail is unknown, so that the answer takes as long either way.
let dummyHash: Promise<string> | undefined;

export class SignInService {
  private readonly byAddress: SlidingWindowLimiter;
  private readonly unknownEmails = new UnknownEmailLockouts();

  constructor(private readonly policy: SignInPolicy = SIGN_IN_POLICY) {
    this.byAddress = new SlidingWindowLimiter(policy.attemptsPerAddress, policy.addressWindowMs);
  }

  async signIn(db: Db, input: { email: string; password: string; address: string }): Promise<SignInResult> {
    if (!this.byAddress.tryTake(input.address)) return { ok: false, reason: "rate-limited" };
    const email = input.email.trim().toLowerCase();
    const user = await db.user.findUnique({ where: { email } });
    const state = user ?? this.unknownEmails.get(email);
    if (isLocked(state)) return { ok: false, reason: "locked" };
    dummyHash ??= hash("not a password of anyone");
    const matches = await verify(user?.passwordHash ?? (await dummyHash), input.password).catch(() => false);
    if (user && matches) {
      if (user.failedSignIns > 0 || user.lockedUntil) await db.user.update({ where: { id: user.id }, data: { failedSignIns: 0, lockedUntil: null } });
      return { ok: true, user: { id: user.id, email: user.email, role: user.role, accountId: user.accountId } };
    }
    const next = afterFailure(state, this.policy);
    if (user) await db.user.update({ where: { id: user.id }, data: next });
    else this.unknownEmails.set(email, next);
    return { ok: false, reason: next.lockedUntil ? "locked" : "invalid" };
  }
}
