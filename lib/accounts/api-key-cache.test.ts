import { describe, expect, it } from "vitest";
import type { Db } from "@/lib/db";
import { createApiKeyCache } from "./api-key-cache";
import { hashApiKey, type AuthenticatedKey } from "./api-keys";

// The key cache's rules (lib/accounts/api-key-cache.ts) on a fake lookup; the notifications that
// drive it, across processes and a lost connection, are tested over HTTP in lib/api/cross-process.test.ts.

const db = {} as Db;

function fakeKeys() {
  const active = new Map<string, AuthenticatedKey>();
  let lookups = 0;
  let gate: Promise<void> | undefined;
  return {
    add(presented: string) {
      active.set(hashApiKey(presented), { id: presented, accountId: "a", active: true, account: { id: "a", suspended: false } } as unknown as AuthenticatedKey);
    },
    remove: (presented: string) => active.delete(hashApiKey(presented)),
    lookups: () => lookups,
    /** Holds lookups until the returned function is called. */
    hold() {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
    async lookup(_db: Db, hash: string) {
      lookups++;
      const answer = active.get(hash) ?? null;
      await gate;
      return answer;
    },
  };
}

describe("API key cache", () => {
  it("caches active keys only while notifications flow, and never unknown keys", async () => {
    const keys = fakeKeys();
    keys.add("rk_a");
    const cache = createApiKeyCache({ lookup: keys.lookup });
    await cache.find(db, "rk_a");
    await cache.find(db, "rk_a");
    expect(keys.lookups()).toBe(2); // not live yet: every call looks its key up
    cache.setLive(true);
    await cache.find(db, "rk_a");
    expect((await cache.find(db, "rk_a"))?.id).toBe("rk_a");
    expect(keys.lookups()).toBe(3);
    expect(await cache.find(db, "rk_unknown")).toBeNull();
    expect(await cache.find(db, "rk_unknown")).toBeNull();
    expect(keys.lookups()).toBe(5);
    expect(await cache.find(db, null)).toBeNull();
    expect(await cache.find(db, "x".repeat(201))).toBeNull();
    expect(keys.lookups()).toBe(5);
  });

  it("forgets every key on a notification, and on a lost connection until it listens again", async () => {
    const keys = fakeKeys();
    keys.add("rk_a");
    const cache = createApiKeyCache({ lookup: keys.lookup });
    cache.setLive(true);
    await cache.find(db, "rk_a");
    keys.remove("rk_a"); // deactivated elsewhere...
    expect(await cache.find(db, "rk_a")).not.toBeNull(); // ...not yet notified
    cache.invalidate();
    expect(await cache.find(db, "rk_a")).toBeNull();

    keys.add("rk_a");
    await cache.find(db, "rk_a");
    expect(cache.size()).toBe(1);
    cache.setLive(false);
    expect(cache.size()).toBe(0);
    const before = keys.lookups();
    await cache.find(db, "rk_a");
    await cache.find(db, "rk_a");
    expect(keys.lookups() - before).toBe(2);
    expect(cache.size()).toBe(0);
  });

  it("does not store a lookup that a notification overtook", async () => {
    const keys = fakeKeys();
    keys.add("rk_a");
    const cache = createApiKeyCache({ lookup: keys.lookup });
    cache.setLive(true);
    const release = keys.hold();
    const inFlight = cache.find(db, "rk_a"); // read the key while it was active
    await new Promise((r) => setTimeout(r, 5));
    keys.remove("rk_a");
    cache.invalidate(); // the deactivation's notification arrives before the read's answer
    release();
    expect(await inFlight).not.toBeNull();
    expect(cache.size()).toBe(0);
    expect(await cache.find(db, "rk_a")).toBeNull();
  });

  it("looks a key up again after the backstop age, and keeps at most maxEntries keys", async () => {
    let t = 0;
    const keys = fakeKeys();
    for (const k of ["rk_a", "rk_b", "rk_c"]) keys.add(k);
    const cache = createApiKeyCache({ lookup: keys.lookup, ttlMs: 1000, maxEntries: 2, now: () => t });
    cache.setLive(true);
    await cache.find(db, "rk_a");
    t = 999;
    await cache.find(db, "rk_a");
    expect(keys.lookups()).toBe(1);
    t = 1000;
    await cache.find(db, "rk_a");
    expect(keys.lookups()).toBe(2);
    await cache.find(db, "rk_b");
    await cache.find(db, "rk_c");
    expect(cache.size()).toBe(2);
  });
});
