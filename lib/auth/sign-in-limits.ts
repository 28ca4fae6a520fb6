/**
 * Brakes on password guessing, in two layers:
 * - per client address, a sliding window of attempts (in memory: a first filter against one
 *   source hammering many e-mails; it resets with the process, which the lockout below does not);
 * - per e-mail, a lockout after consecutive failures (stored on the user row, so it holds across
 *   restarts and processes). Unknown e-mails get the same lockout in memory, so that the answer
 *   never tells whether an address has an account.
 */
export interface SignInPolicy {
  attemptsPerAddress: number;
  addressWindowMs: number;
  failuresBeforeLockout: number;
  lockoutMs: number;
}

export const SIGN_IN_POLICY: SignInPolicy = {
  attemptsPerAddress: 30,
  addressWindowMs: 15 * 60_000,
  failuresBeforeLockout: 5,
  lockoutMs: 15 * 60_000,
};

export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts an attempt; false when the key has used up its window. */
  tryTake(key: string, now = Date.now()): boolean {
    const recent = (this.hits.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      return false;
    }
    recent.push(now);
    this.hits.set(key, recent);
    if (this.hits.size > 10_000) this.prune(now);
    return true;
  }

  private prune(now: number): void {
    for (const [key, times] of this.hits) if (times.every((t) => now - t >= this.windowMs)) this.hits.delete(key);
  }
}

/** Failure counts for e-mails that have no user, shaped like the user row's fields. */
export class UnknownEmailLockouts {
  private readonly failures = new Map<string, { failedSignIns: number; lockedUntil: Date | null }>();

  get(email: string) {
    return this.failures.get(email) ?? { failedSignIns: 0, lockedUntil: null };
  }

  set(email: string, state: { failedSignIns: number; lockedUntil: Date | null }): void {
    if (this.failures.size > 10_000) this.failures.clear();
    this.failures.set(email, state);
  }
}

export function isLocked(state: { lockedUntil: Date | null }, now = Date.now()): boolean {
  return state.lockedUntil !== null && state.lockedUntil.getTime() > now;
}

/** The state after one more failure: locked for lockoutMs once failuresBeforeLockout are reached. */
export function afterFailure(state: { failedSignIns: number }, policy: SignInPolicy, now = Date.now()) {
  const failedSignIns = state.failedSignIns + 1;
  return failedSignIns >= policy.failuresBeforeLockout
    ? { failedSignIns: 0, lockedUntil: new Date(now + policy.lockoutMs) }
    : { failedSignIns, lockedUntil: null };
}
