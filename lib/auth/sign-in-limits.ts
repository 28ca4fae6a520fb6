/**
 * Brakes on password guessing, in two layers:
 * - per client address, a sliding window of attempts (in memory: a first filter against one
 *   source hammering many e-mails; it resets with the process, which the lockout below does not);
 * - per e-mail, a lockout after consecutive failures (stored on the user row, so it holds across
 *   restarts and processes). Unknown e-mails get the same lockout in memory, so that the answer
 *   never tells whether an address has an account. An attempt is counted before its password is
 *   checked, so concurrent guesses cannot pass the limit;
 * - per process, a budget of password checks (argon2 is deliberately costly: without a budget anyone
 *   could make the server hash at will) and a cap on how many run at once.
 */
export interface SignInPolicy {
  attemptsPerAddress: number;
  addressWindowMs: number;
  failuresBeforeLockout: number;
  lockoutMs: number;
  /** Password checks (argon2) per second for the whole process, and the burst above it. */
  hashesPerSecond: number;
  hashBurst: number;
  /** Password checks running at once; others wait their turn. */
  concurrentHashes: number;
}

export const SIGN_IN_POLICY: SignInPolicy = {
  attemptsPerAddress: 30,
  addressWindowMs: 15 * 60_000,
  failuresBeforeLockout: 5,
  lockoutMs: 15 * 60_000,
  hashesPerSecond: 5,
  hashBurst: 20,
  concurrentHashes: 1,
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

/** Attempt counts for e-mails that have no user, with the same rules as the user row's. */
export class UnknownEmailLockouts {
  private readonly attempts = new Map<string, { count: number; lockedUntil: number | null }>();

  constructor(private readonly policy: Pick<SignInPolicy, "failuresBeforeLockout">) {}

  /** The attempt's number, or null while locked or at the limit (see takeAttempt in sign-in.ts). */
  take(email: string, now = Date.now()): number | null {
    let state = this.attempts.get(email);
    if (state?.lockedUntil !== null && state?.lockedUntil !== undefined && state.lockedUntil <= now) state = undefined;
    state ??= { count: 0, lockedUntil: null };
    if (state.lockedUntil !== null || state.count >= this.policy.failuresBeforeLockout) return null;
    state.count += 1;
    if (this.attempts.size > 10_000) this.attempts.clear();
    this.attempts.set(email, state);
    return state.count;
  }

  giveBack(email: string): void {
    const state = this.attempts.get(email);
    if (state && state.lockedUntil === null && state.count > 0) state.count -= 1;
  }

  lock(email: string, until: Date): void {
    this.attempts.set(email, { count: this.policy.failuresBeforeLockout, lockedUntil: until.getTime() });
  }
}

/** At most `limit` tasks at once; the others wait in order. */
export class HashingGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
