import { describe, expect, it } from "vitest";
import type { Db } from "@/lib/db";
import { createApiKeyCache } from "./api-key-cache";
import { hashApiKey, isExpired, type AuthenticatedKey } from "./api-keys";

// What is particular to the key cache (lib/accounts/api-key-cache.ts) on a fake lookup. The rules it
// shares with every notified cache (an overtaken lookup, the backstop age, the size bound) are tested in
// lib/db/notified-cache.test.ts; the notifications that drive it, across processes and a lost
// connection, over HTTP in tests/server/cross-process.test.ts.

const db = {} as Db;

function fakeKeys() {
  const active = new Map<string, AuthenticatedKey>();
  let lookups = 0;
  return {
    add(presented: string, expiresAt: Date | null = null) {
      active.set(hashApiKey(presented), { id: presented, accountId: "a", active: true, expiresAt, account: { id: "a", suspended: false } } as unknown as AuthenticatedKey);
    },
    remove: (presented: string) => active.delete(hashApiKey(presented)),
    lookups: () => lookups,
    async lookup(_db: Db, hash: string) {
      lookups++;
      return active.get(hash) ?? null;
    },
  };
}

describe("API key cache", () => {
  it("cached() reads a key from memory by its hash, refuses impossible values at once, and says when find() must look", async () => {
    const keys = fakeKeys();
    keys.add("rk_a");
    const cache = createApiKeyCache({ lookup: keys.lookup });
    cache.setLive(true);
    expect(cache.cached(null)).toBeNull();
    expect(cache.cached("rk_" + "x".repeat(10_000))).toBeNull();
    expect(cache.cached("rk_a")).toBeUndefined(); // not looked up yet
    await cache.find(db, "rk_a");
    expect(cache.cached("rk_a")?.id).toBe("rk_a");
    expect(cache.cached("rk_b")).toBeUndefined();
    cache.invalidate();
    expect(cache.cached("rk_a")).toBeUndefined();
    expect(keys.lookups()).toBe(1);
  });

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
});

const SHA256_RK_TEST = "777cf8e9cb1c2ec1e749af726b07ef9d2391d25f63efb94e0110df191ac9ead9";

describe("API key expiry", () => {
  it("a cached key is refused from the moment it expires, without waiting for a refresh", async () => {
    const keys = fakeKeys();
    const soon = new Date(Date.now() + 150);
    keys.add("rk_soon", soon);
    keys.add("rk_never");
    const cache = createApiKeyCache({ lookup: keys.lookup });
    cache.setLive(true);
    expect((await cache.find(db, "rk_soon"))?.id).toBe("rk_soon");
    expect(cache.cached("rk_soon")?.id).toBe("rk_soon");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await cache.find(db, "rk_soon")).toBeNull();
    expect(cache.cached("rk_soon")).toBeNull();
    expect((await cache.find(db, "rk_never"))?.id).toBe("rk_never");
  });

  it("isExpired: never without an expiry, expired at and after the moment", () => {
    expect(isExpired({ expiresAt: null })).toBe(false);
    expect(isExpired({ expiresAt: new Date(1000) }, 999)).toBe(false);
    expect(isExpired({ expiresAt: new Date(1000) }, 1000)).toBe(true);
  });
});

describe("hashApiKey", () => {
  it("is the SHA-256 hex digest of the key's UTF-8 bytes, as every stored key was hashed", () => {
    // sha256("rk_test") computed independently (coreutils: printf rk_test | sha256sum).
    expect(hashApiKey("rk_test")).toBe(SHA256_RK_TEST);
    expect(hashApiKey("rk_tesu")).not.toBe(SHA256_RK_TEST);
  });
});
