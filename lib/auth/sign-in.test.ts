import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/accounts/users";
import type { OpenDatabase } from "@/lib/db/connect";
import { SignInService } from "./sign-in";
import { endSessions, userOfSession } from "./session-version";
import { openTestDatabase } from "@/lab/test-support/database";
import { HashingGate, SlidingWindowLimiter, type SignInPolicy } from "./sign-in-limits";

// Sign-in on a real database, in both modes: argon2id hashes, lockout after consecutive failures
// (kept on the user row, exact under concurrent guesses), the same answers for unknown e-mails, the
// per-address limit and the process-wide budget of password checks.

const PASSWORD = "a long enough password";
const policy: SignInPolicy = {
  attemptsPerAddress: 1000,
  addressWindowMs: 60_000,
  failuresBeforeLockout: 3,
  lockoutMs: 1500,
  hashesPerSecond: 1000,
  hashBurst: 1000,
  concurrentHashes: 2,
};

describe.each(["pglite", "postgres"] as const)("SignInService (%s)", (mode) => {
  let open: OpenDatabase;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ open, close } = await openTestDatabase(mode, "signin"));
    const account = await open.prisma.account.create({ data: { name: "A" } });
    for (const email of ["vet@a.test", "other@a.test", "raced@a.test", "budget@a.test"]) {
      await createUser(open.prisma, { email, password: PASSWORD, role: "staff", accountId: account.id });
    }
  });

  afterAll(async () => {
    await close?.();
  });

  it("stores only an argon2id hash and signs in with the right password", async () => {
    const row = await open.prisma.user.findUniqueOrThrow({ where: { email: "vet@a.test" } });
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row.passwordHash).not.toContain(PASSWORD);
    const result = await new SignInService(policy).signIn(open.prisma, { email: "Vet@A.test", password: PASSWORD, address: "1.1.1.1" });
    expect(result).toMatchObject({ ok: true, user: { email: "vet@a.test", role: "staff" } });
  });

  it("locks the account after consecutive failures, even for the right password, until the lockout ends", async () => {
    const service = new SignInService(policy);
    const attempt = (password: string) => service.signIn(open.prisma, { email: "other@a.test", password, address: "2.2.2.2" });
    expect(await attempt("wrong 1")).toEqual({ ok: false, reason: "invalid" });
    expect(await attempt("wrong 2")).toEqual({ ok: false, reason: "invalid" });
    expect(await attempt("wrong 3")).toEqual({ ok: false, reason: "locked" });
    expect(await attempt(PASSWORD)).toEqual({ ok: false, reason: "locked" });
    // The lockout is on the user row: a new process (a new service) sees it too.
    expect(await new SignInService(policy).signIn(open.prisma, { email: "other@a.test", password: PASSWORD, address: "3.3.3.3" })).toEqual({
      ok: false,
      reason: "locked",
    });
    await new Promise((r) => setTimeout(r, policy.lockoutMs + 100));
    expect((await attempt(PASSWORD)).ok).toBe(true);
    const row = await open.prisma.user.findUniqueOrThrow({ where: { email: "other@a.test" } });
    expect(row).toMatchObject({ failedSignIns: 0, lockedUntil: null });
  });

  it("answers an unknown e-mail exactly like a known one, lockout included", async () => {
    const service = new SignInService(policy);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await service.signIn(open.prisma, { email: "nobody@a.test", password: "x", address: "4.4.4.4" }));
    expect(answers.map((a) => (a.ok ? "ok" : a.reason))).toEqual(["invalid", "invalid", "locked", "locked"]);
  });

  it("limits attempts per client address", async () => {
    const service = new SignInService({ ...policy, attemptsPerAddress: 2 });
    const attempt = () => service.signIn(open.prisma, { email: "vet@a.test", password: PASSWORD, address: "5.5.5.5" });
    expect((await attempt()).ok).toBe(true);
    expect((await attempt()).ok).toBe(true);
    expect(await attempt()).toEqual({ ok: false, reason: "rate-limited" });
    expect((await service.signIn(open.prisma, { email: "vet@a.test", password: PASSWORD, address: "6.6.6.6" })).ok).toBe(true);
  });

  it("ends every session of a user at sign-out: a copied token stops working, a new sign-in works", async () => {
    const service = new SignInService(policy);
    const first = await service.signIn(open.prisma, { email: "vet@a.test", password: PASSWORD, address: "9.9.9.9" });
    if (!first.ok) throw new Error("sign-in failed");
    const token = { id: first.user.id, sessionVersion: first.user.sessionVersion };
    expect(await userOfSession(open.prisma, token)).toMatchObject({ email: "vet@a.test" });
    await endSessions(open.prisma, first.user.id);
    expect(await userOfSession(open.prisma, token)).toBeNull();
    const again = await service.signIn(open.prisma, { email: "vet@a.test", password: PASSWORD, address: "9.9.9.9" });
    if (!again.ok) throw new Error("sign-in failed");
    expect(await userOfSession(open.prisma, { id: again.user.id, sessionVersion: again.user.sessionVersion })).toMatchObject({ email: "vet@a.test" });
  });

  it("checks no more passwords than the limit under 40 concurrent guesses (80 were checked before)", async () => {
    const service = new SignInService(policy);
    const guesses = Array.from({ length: 40 }, (_, i) => service.signIn(open.prisma, { email: "raced@a.test", password: `wrong ${i}`, address: "7.7.7.7" }));
    const answers = (await Promise.all(guesses)).map((a) => (a.ok ? "ok" : a.reason));
    expect(answers.filter((a) => a === "invalid")).toHaveLength(policy.failuresBeforeLockout - 1);
    expect(answers.filter((a) => a === "locked")).toHaveLength(40 - (policy.failuresBeforeLockout - 1));
    expect(await service.signIn(open.prisma, { email: "raced@a.test", password: PASSWORD, address: "7.7.7.7" })).toEqual({ ok: false, reason: "locked" });
    const unknown = await Promise.all(Array.from({ length: 40 }, () => service.signIn(open.prisma, { email: "ghost@a.test", password: "x", address: "7.7.7.8" })));
    expect(unknown.filter((a) => !a.ok && a.reason === "invalid")).toHaveLength(policy.failuresBeforeLockout - 1);
  });

  it("runs no more password checks than the process budget, and a refused attempt counts against nobody", async () => {
    const service = new SignInService({ ...policy, hashesPerSecond: 0.001, hashBurst: 2 });
    const attempt = (email: string, password: string) => service.signIn(open.prisma, { email, password, address: "8.8.8.8" });
    expect(await attempt("budget@a.test", "wrong")).toEqual({ ok: false, reason: "invalid" });
    expect((await attempt("budget@a.test", PASSWORD)).ok).toBe(true);
    for (let i = 0; i < 5; i++) expect(await attempt("budget@a.test", "wrong")).toEqual({ ok: false, reason: "rate-limited" });
    const row = await open.prisma.user.findUniqueOrThrow({ where: { email: "budget@a.test" } });
    expect(row).toMatchObject({ failedSignIns: 0, lockedUntil: null });
  });
});

describe("limits", () => {
  it("a sliding window frees attempts as they age out", () => {
    const limiter = new SlidingWindowLimiter(2, 1000);
    expect([limiter.tryTake("k", 0), limiter.tryTake("k", 10), limiter.tryTake("k", 20)]).toEqual([true, true, false]);
    expect(limiter.tryTake("k", 1001)).toBe(true);
  });

  it("the hashing gate runs at most its limit at once", async () => {
    const gate = new HashingGate(2);
    let running = 0;
    let most = 0;
    const task = () => gate.run(async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
    });
    await Promise.all(Array.from({ length: 10 }, task));
    expect(most).toBe(2);
  });
});
