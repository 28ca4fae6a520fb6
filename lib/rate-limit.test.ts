import { describe, expect, it } from "vitest";
import { createRateLimiter } from "./rate-limit";

describe("per-key rate limiter", () => {
  it("allows a burst, then refuses with a Retry-After, then refills at the steady rate", () => {
    let t = 0;
    const limiter = createRateLimiter({ perSecond: 2, burst: 3 }, () => t);
    expect([1, 2, 3].map(() => limiter.take("k").allowed)).toEqual([true, true, true]);
    expect(limiter.take("k")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    // Another key has its own bucket.
    expect(limiter.take("other").allowed).toBe(true);
    t += 500; // one token back at 2 per second
    expect(limiter.take("k").allowed).toBe(true);
    expect(limiter.take("k").allowed).toBe(false);
    t += 10_000;
    expect([1, 2, 3, 4].map(() => limiter.take("k").allowed)).toEqual([true, true, true, false]);
  });

  it("forgets idle keys, so memory stays bounded by the keys active within one refill period", () => {
    let t = 0;
    const limiter = createRateLimiter({ perSecond: 10, burst: 10 }, () => t);
    for (let i = 0; i < 1000; i++) limiter.take(`key-${i}`);
    expect(limiter.size()).toBe(1000);
    t += 2000;
    limiter.take("fresh");
    expect(limiter.size()).toBe(1);
  });
});
