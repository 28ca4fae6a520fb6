import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lab/test-support/scale";
import { pgNotifications, SYNC_CHANNEL, type DbNotifications } from "./notifications";

// The listening connection, its lease and the writers' barrier (lib/db/notifications.ts) on a real
// PostgreSQL database, several "processes" (instances) in this one, with a short lease so that
// waiting one out is quick. Over HTTP across two server processes: tests/server/cross-process.test.ts.

const LEASE_MS = 400;
const PING_MS = 50;
const CHANNEL = "rhinarium_test_change";

let database: TestDatabase;
let sql: pg.Client;
const opened: DbNotifications[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(5);
  }
}

/** A "process": its notifications instance and what it received on CHANNEL. */
function processOn(options: { now?: () => number } = {}) {
  const notifications = pgNotifications(database.url, { leaseMs: LEASE_MS, pingMs: PING_MS, ...options });
  opened.push(notifications);
  const received: string[] = [];
  const liveEvents: boolean[] = [];
  notifications.listen(CHANNEL, { notify: (payload) => received.push(payload), live: (isLive) => liveEvents.push(isLive) });
  return { notifications, received, liveEvents };
}

beforeAll(async () => {
  database = await createTestDatabase("notify");
  sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
});

afterAll(async () => {
  await Promise.all(opened.map((n) => n.close()));
  await sql?.end();
  await database?.drop();
});

describe("notifications: lease and barrier", () => {
  it("a barrier resolves only once every listening process has applied what was committed before it", async () => {
    const writer = processOn();
    const reader = processOn();
    await until(() => writer.notifications.fresh() && reader.notifications.fresh());
    await sleep(LEASE_MS + 100); // past the first lease after listening, which a barrier waits out
    for (let i = 0; i < 20; i++) {
      await sql.query("SELECT pg_notify($1, $2)", [CHANNEL, `v${i}`]); // a trigger's notification, committed
      const outcome = await writer.notifications.barrier();
      expect(reader.received).toContain(`v${i}`);
      expect(outcome.acks).toBeGreaterThanOrEqual(1);
      expect(outcome.waitedOut).toBe(0);
      expect(outcome.ms).toBeLessThan(LEASE_MS);
    }
  });

  it("a process that stops answering is waited out until its lease has run, never longer", async () => {
    const writer = processOn();
    await until(() => writer.notifications.fresh());
    await sleep(LEASE_MS + 100);
    // A process that took a lease (its ping came back) and then froze: it will ack nothing.
    await sql.query("SELECT pg_notify($1, $2)", [SYNC_CHANNEL, "ping frozen-process 0"]);
    const outcome = await writer.notifications.barrier();
    expect(outcome.waitedOut).toBe(1);
    expect(outcome.ms).toBeGreaterThan(LEASE_MS - 100);
    expect(outcome.ms).toBeLessThan(LEASE_MS + 300);
    // Its lease is over: the next barrier does not wait for it.
    expect((await writer.notifications.barrier()).waitedOut).toBe(0);
  });

  it("a process answers from memory only while its own pings come back, and not while its connection is lost", async () => {
    let skew = 0;
    const reader = processOn({ now: () => performance.now() + skew });
    await until(() => reader.notifications.fresh());
    // Time passes with no ping back (a stalled event loop, a dead connection not yet noticed).
    skew += LEASE_MS;
    expect(reader.notifications.fresh()).toBe(false);
    await until(() => reader.notifications.fresh()); // the next ping renews it
    const { rows } = await sql.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'rhinarium-cache:%'",
    );
    expect(rows.length).toBeGreaterThan(0);
    await until(() => reader.liveEvents.at(-1) === false);
    expect(reader.notifications.fresh()).toBe(false);
    await until(() => reader.liveEvents.at(-1) === true && reader.notifications.fresh()); // it listens again by itself
    await sql.query("SELECT pg_notify($1, 'after')", [CHANNEL]);
    await until(() => reader.received.includes("after"));
  });

  it("a process that closes says so, and is not waited out", async () => {
    const writer = processOn();
    const leaving = processOn();
    await until(() => writer.notifications.fresh() && leaving.notifications.fresh());
    await sleep(LEASE_MS + 100);
    await leaving.notifications.close();
    expect(leaving.liveEvents.at(-1)).toBe(false); // it stopped answering from memory first
    const outcome = await writer.notifications.barrier();
    expect(outcome.waitedOut).toBe(0);
    expect(outcome.ms).toBeLessThan(LEASE_MS / 2);
  });

  it("until it has listened for a whole lease, a process's barrier waits the lease out", async () => {
    const late = processOn();
    await until(() => late.notifications.fresh());
    const outcome = await late.notifications.barrier();
    expect(outcome.ms).toBeGreaterThan(LEASE_MS / 2);
    expect(outcome.ms).toBeLessThan(LEASE_MS + 300);
  });
});
