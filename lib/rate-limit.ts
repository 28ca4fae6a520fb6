// Rate limiting: a token bucket per key (an API key, a sign-in address), in this process's memory.
// Every /v2 call of an API key (lib/api/handle-request.ts), every sign-in attempt (lib/auth/sign-in.ts)
// takes one token of its bucket; tokens come back at `perSecond` up to `burst`. With several web processes
// (PostgreSQL mode behind a balancer) each process limits on its own, so the effective limit is the
// per-process one times the number of processes: enough to stop one runaway client from starving
// the others, which is the point here, not billing-grade accounting.

export interface RateLimit {
  perSecond: number;
  burst: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until one token is back (for Retry-After); 0 when allowed. */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const ALLOWED: RateDecision = Object.freeze({ allowed: true, retryAfterSeconds: 0 });

export function createRateLimiter(limit: RateLimit, now: () => number = () => performance.now()) {
  const buckets = new Map<string, Bucket>();
  // A bucket left alone this long is full again, so forgetting it changes nothing and keeps memory bounded.
  const refillMs = (limit.burst / limit.perSecond) * 1000;
  let lastPrune = now();

  function prune(t: number): void {
    if (t - lastPrune < refillMs) return;
    lastPrune = t;
    for (const [key, bucket] of buckets) if (t - bucket.updatedAt >= refillMs) buckets.delete(key);
  }

  return {
    take(key: string): RateDecision {
      const t = now();
      prune(t);
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = { tokens: limit.burst, updatedAt: t };
        buckets.set(key, bucket);
      }
      bucket.tokens = Math.min(limit.burst, bucket.tokens + ((t - bucket.updatedAt) / 1000) * limit.perSecond);
      bucket.updatedAt = t;
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return ALLOWED;
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / limit.perSecond)) };
    },
    /** Keys currently tracked (for tests of the memory bound). */
    size: () => buckets.size,
  };
}
