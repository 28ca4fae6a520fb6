import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/accounts/users";
import { openOwnedDatabase } from "@/lib/db";
import type { OpenDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { SignInService } from "./sign-in";
import { afterFailure, SlidingWindowLimiter, type SignInPolicy } from "./sign-in-limits";

// Sign-in on a real (embedded) database: argon2id hashes, lockout after consecutive failures (kept on
// the user row), the same answers for unknown e-mails, and the per-address limit.

let dir: string;
let open: OpenDatabase;
const PASSWORD = "a long enough password";
const policy: SignInPolicy = { attemptsPerAddress: 1000, addressWindowMs: 60_000, failuresBeforeLockout: 3, lockoutMs: 1500 };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-dash-signin-"));
  open = await openOwnedDatabase(readEnv({ DATA_DIR: dir } as unknown as NodeJS.ProcessEnv), "cli");
  const account = await open.prisma.account.create({ data: { name: "A" } });
  await createUser(open.prisma, { email: "vet@a.test", password: PASSWORD, role: "staff", accountId: account.id });
  await createUser(open.prisma, { email: "other@a.test", password: PASSWORD, role: "staff", accountId: account.id });
});

afterAll(async () => {
  await open?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("SignInService", () => {
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
});

describe("limits", () => {
  it("a sliding window frees attempts as they age out", () => {
    const limiter = new SlidingWindowLimiter(2, 1000);
    expect([limiter.tryTake("k", 0), limiter.tryTake("k", 10), limiter.tryTake("k", 20)]).toEqual([true, true, false]);
    expect(limiter.tryTake("k", 1001)).toBe(true);
  });

  it("a failure at the limit locks and resets the count", () => {
    expect(afterFailure({ failedSignIns: 1 }, policy, 0)).toEqual({ failedSignIns: 2, lockedUntil: null });
    expect(afterFailure({ failedSignIns: 2 }, policy, 0)).toEqual({ failedSignIns: 0, lockedUntil: new Date(policy.lockoutMs) });
  });
});
