import { describe, expect, it } from "vitest";
import { createNotifiedCache } from "./notified-cache";

// The rules of every notified cache (lib/db/notified-cache.ts) on a fake loader. The notifications,
// lease and barrier that drive it are tested on PostgreSQL in lib/db/notifications.test.ts, and over
// HTTP across two server processes in tests/server/cross-process.test.ts.

function fakeTable() {
  const rows = new Map<string, string>();
  let loads = 0;
  let gate: Promise<void> | undefined;
  return {
    rows,
    loads: () => loads,
    /** Holds loads (after they read the row) until the returned function is called. */
    hold() {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
    load: (key: string) => async () => {
      loads++;
      const value = rows.get(key) ?? null;
      await gate;
      return value;
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("notified cache", () => {
  it("cached() answers what get() would from memory, without a promise, and undefined where get() would load", async () => {
    const table = fakeTable();
    table.rows.set("a", "A");
    let fresh = true;
    let now = 0;
    const cache = createNotifiedCache<string>({ ttlMs: 1000, maxEntries: 2, fresh: () => fresh, now: () => now });
    cache.setLive(true);
    expect(cache.cached("a")).toBeUndefined(); // never loaded
    await cache.get("a", table.load("a"));
    expect(cache.cached("a")).toBe("A");
    expect(cache.cached("a", (v) => v === "other")).toBeUndefined(); // not usable by this caller
    fresh = false;
    expect(cache.cached("a")).toBeUndefined(); // the lease ran out
    fresh = true;
    table.rows.set("b", "B");
    await cache.get("b", table.load("b"));
    expect(cache.cached("a")).toBe("A"); // a read makes "a" the most recent...
    table.rows.set("c", "C");
    await cache.get("c", table.load("c")); // ...so the full cache drops "b"
    expect([cache.cached("b"), cache.cached("a"), cache.cached("c")]).toEqual([undefined, "A", "C"]);
    cache.invalidate("a");
    expect(cache.cached("a")).toBeUndefined();
    now = 1000; // past the backstop age: dropped
    expect(cache.cached("c")).toBeUndefined();
    expect(cache.size()).toBe(0);
    cache.setLive(false);
    expect(cache.cached("c")).toBeUndefined();
  });

  it("answers from memory only while live and fresh, and never caches a miss", async () => {
    const table = fakeTable();
    table.rows.set("a", "A");
    let fresh = true;
    const cache = createNotifiedCache<string>({ ttlMs: 60_000, maxEntries: 10, fresh: () => fresh });
    await cache.get("a", table.load("a"));
    await cache.get("a", table.load("a"));
    expect(table.loads()).toBe(2); // not live yet
    cache.setLive(true);
    expect(await cache.get("a", table.load("a"))).toBe("A");
    expect(await cache.get("a", table.load("a"))).toBe("A");
    expect(table.loads()).toBe(3);
    fresh = false; // the lease ran out: nothing from memory, nothing stored
    table.rows.set("a", "A2");
    expect(await cache.get("a", table.load("a"))).toBe("A2");
    expect(table.loads()).toBe(4);
    fresh = true;
    expect(await cache.get("a", table.load("a"))).toBe("A"); // kept, unchanged as far as notifications say
    expect(await cache.get("missing", table.load("missing"))).toBeNull();
    expect(await cache.get("missing", table.load("missing"))).toBeNull();
    expect(table.loads()).toBe(6);
    cache.setLive(false);
    expect(cache.size()).toBe(0);
  });

  it("drops a key on its notification, everything on a flush, and leaves other keys alone", async () => {
    const table = fakeTable();
    table.rows.set("a", "A");
    table.rows.set("b", "B");
    const cache = createNotifiedCache<string>({ ttlMs: 60_000, maxEntries: 10 });
    cache.setLive(true);
    await cache.get("a", table.load("a"));
    await cache.get("b", table.load("b"));
    table.rows.set("a", "A2");
    expect(await cache.get("a", table.load("a"))).toBe("A"); // not yet notified
    cache.invalidate("a");
    expect(await cache.get("a", table.load("a"))).toBe("A2");
    expect(await cache.get("b", table.load("b"))).toBe("B");
    expect(table.loads()).toBe(3);
    cache.clear();
    expect(cache.size()).toBe(0);
  });

  it("does not store a read that its key's notification, a flush or a lost connection overtook", async () => {
    for (const overtake of ["key", "flush", "lost"] as const) {
      const table = fakeTable();
      table.rows.set("a", "A");
      table.rows.set("b", "B");
      const cache = createNotifiedCache<string>({ ttlMs: 60_000, maxEntries: 10 });
      cache.setLive(true);
      const release = table.hold();
      const readA = cache.get("a", table.load("a")); // read the row before the change committed
      const readB = cache.get("b", table.load("b"));
      await tick();
      table.rows.set("a", "A2");
      if (overtake === "key") cache.invalidate("a");
      else if (overtake === "flush") cache.clear();
      else {
        cache.setLive(false);
        cache.setLive(true);
      }
      release();
      expect(await readA).toBe("A");
      expect(await readB).toBe("B");
      // The overtaken read is not stored; another key's read is, unless everything was dropped.
      expect(await cache.get("a", table.load("a"))).toBe("A2");
      expect(cache.size()).toBe(overtake === "key" ? 2 : 1);
    }
  });

  it("answers only what `usable` accepts from memory", async () => {
    const table = fakeTable();
    table.rows.set("a", "A");
    const cache = createNotifiedCache<string>({ ttlMs: 60_000, maxEntries: 10 });
    cache.setLive(true);
    await cache.get("a", table.load("a"));
    expect(await cache.get("a", async () => null, (v) => v !== "A")).toBeNull(); // goes to its loader
    expect(await cache.get("a", table.load("a"))).toBe("A");
    expect(table.loads()).toBe(1);
  });

  it("reads a key again after the backstop age, and drops the least recently used beyond maxEntries", async () => {
    let t = 0;
    const table = fakeTable();
    for (const k of ["a", "b", "c"]) table.rows.set(k, k.toUpperCase());
    const cache = createNotifiedCache<string>({ ttlMs: 1000, maxEntries: 2, now: () => t });
    cache.setLive(true);
    await cache.get("a", table.load("a"));
    t = 999;
    await cache.get("a", table.load("a"));
    expect(table.loads()).toBe(1);
    t = 1000;
    await cache.get("a", table.load("a")); // expired: read again (stored until 2000)
    expect(table.loads()).toBe(2);
    await cache.get("b", table.load("b"));
    await cache.get("a", table.load("a")); // a is now the most recently used
    await cache.get("c", table.load("c")); // evicts b
    expect(cache.size()).toBe(2);
    const before = table.loads();
    await cache.get("a", table.load("a"));
    await cache.get("c", table.load("c"));
    expect(table.loads()).toBe(before);
    await cache.get("b", table.load("b"));
    expect(table.loads()).toBe(before + 1);
  });
});
