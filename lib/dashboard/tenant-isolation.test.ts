import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureDefaultPlans } from "@/lib/accounts/plans";
import { openOwnedDatabase } from "@/lib/db";
import type { Db, OpenDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { writeImageFile } from "@/lib/storage/images";
import { InProcessJobQueue, setJobQueue } from "@/lib/jobs/job-queue";
import type { SessionUser } from "@/lib/auth/session";
import { appearanceJpeg, noseCapture } from "@/lab/test-support/nose-images";
import { invokeAction, type DashboardAction } from "./action-client";
import {
  inviteTeamMemberAction,
  revokeInvitationAction,
  changeRoleAction,
  deactivateKeyAction,
  issueKeyAction,
  removeTeamMemberAction,
  resetMemberPasswordAction,
  selectSearchPoolAction,
  unlockMemberAction,
} from "./account";
import { listAuditLog, auditQuerySchema } from "./audit";
import { createCaptureSessionAction, getJobProgress, jobProgressAction, startCaptureJobAction, uploadCaptureImageAction } from "./capture";
import { readImageForUser } from "./images";
import { getJobDetail, listJobs, jobListQuerySchema } from "./jobs";
import { setAccountSuspendedAction } from "./operator";
import { petListQuerySchema } from "./pet-list-query";
import { createPetAction, deletePetAction, getPetDetail, listPetsPage, updatePetAction } from "./pets";
import { getUsageReport } from "./usage";
import { recordApiCall, summariseUsage } from "@/lib/api/metering";
import { MAX_ACTIVE_KEYS_PER_ACCOUNT } from "@/lib/accounts/api-keys";

// Every dashboard action and query, run as account A's users with account B's ids: each must answer
// "not found" (or not allowed) and leave B's data as it was. Each case also runs as B's own user on
// the same ids, to show the test would see the data if the scope leaked.

let dir: string;
let open: OpenDatabase;
let db: Db;

interface Tenant {
  accountId: string;
  owner: SessionUser;
  staff: SessionUser;
  petId: string;
  sessionId: string;
  jobId: string;
  keyId: string;
  imageId: string;
  memberId: string;
  invitationId: string;
}

async function seedTenant(name: string): Promise<Tenant> {
  const account = await db.account.create({ data: { name, plan: { connect: { name: "standard" } } } });
  const user = async (role: "owner" | "staff") => {
    const row = await db.user.create({ data: { email: `${role}@${name}.test`, passwordHash: "x", role, accountId: account.id } });
    return { id: row.id, email: row.email, role: row.role, accountId: account.id } satisfies SessionUser;
  };
  const pet = await db.pet.create({ data: { accountId: account.id, species: "DOG", breed: "Original", metadata: '{"name":"orig"}' } });
  const session = await db.captureSession.create({
    data: { accountId: account.id, species: "DOG", purpose: "PET_VERIFICATION", petId: pet.id, expiresAt: new Date(Date.now() + 3_600_000) },
  });
  const filePath = path.join("images", account.id, session.id, "fingerprint-x.jpg");
  await writeImageFile(filePath, await noseCapture(1, 0));
  const image = await db.fingerprintImage.create({
    data: { accountId: account.id, sessionId: session.id, petId: pet.id, filePath, byteSize: 1, usable: true, quality: { score: 80, usable: true, reasons: [], figures: {} } },
  });
  const job = await db.job.create({
    data: { accountId: account.id, kind: "FINGERPRINT_ADDITION", petId: pet.id, sessionId: session.id, status: "FAILED", failureReason: { code: "INSUFFICIENT_USABLE_IMAGES", summary: "secret summary" } },
  });
  const key = await db.apiKey.create({ data: { accountId: account.id, hash: `hash-${name}`, prefix: "rk_test" } });
  const member = await user("staff");
  const invitation = await db.invitation.create({
    data: { accountId: account.id, email: `new@${name}.test`, role: "staff", tokenHash: `token-${name}`, expiresAt: new Date(Date.now() + 3_600_000) },
  });
  return { accountId: account.id, owner: await user("owner"), staff: member, petId: pet.id, sessionId: session.id, jobId: job.id, keyId: key.id, imageId: image.id, memberId: member.id, invitationId: invitation.id };
}

let a: Tenant;
let b: Tenant;

async function snapshotOf(t: Tenant) {
  return {
    pet: await db.pet.findUnique({ where: { id: t.petId } }),
    session: await db.captureSession.findUnique({ where: { id: t.sessionId }, include: { fingerprints: true, appearances: true } }),
    jobs: await db.job.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } }),
    keys: await db.apiKey.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } }),
    users: await db.user.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } }),
    invitations: await db.invitation.findMany({ where: { accountId: t.accountId }, orderBy: { id: "asc" } }),
    account: await db.account.findUnique({ where: { id: t.accountId } }),
  };
}

async function expectRefused<T>(action: DashboardAction<never, T>, user: SessionUser, input: unknown) {
  const result = await invokeAction(action as DashboardAction<never, T>, db, user, input);
  expect(result.ok, JSON.stringify(result)).toBe(false);
  // Refused for the scope ("does not exist"), not for a malformed input or a missing permission.
  if (!result.ok) {
    expect(result.error.fields, JSON.stringify(result)).toBeUndefined();
    expect(result.error.message).toMatch(/does not exist|expired|Unknown .* job id/);
  }
  return result;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-dash-tenancy-"));
  process.env.DATA_DIR = dir;
  open = await openOwnedDatabase(readEnv({ DATA_DIR: dir } as unknown as NodeJS.ProcessEnv), "cli");
  db = open.prisma;
  await ensureDefaultPlans(db);
  setJobQueue(new InProcessJobQueue(db, 0));
  a = await seedTenant("a");
  b = await seedTenant("b");
});

afterAll(async () => {
  await open?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("dashboard actions with another account's ids", () => {
  it("refuse every write and leave account B unchanged", async () => {
    const before = await snapshotOf(b);
    const nose = new File([new Uint8Array(await noseCapture(1, 1))], "n.jpg", { type: "image/jpeg" });
    const photo = new File([new Uint8Array(await appearanceJpeg())], "a.jpg", { type: "image/jpeg" });
    const staffCases: [DashboardAction<never, unknown>, unknown][] = [
      [updatePetAction as never, { petId: b.petId, metadata: '{"name":"hijacked"}', breed: "Hijacked" }],
      [deletePetAction as never, { petId: b.petId }],
      [createCaptureSessionAction as never, { purpose: "PET_PROFILE_REGISTRATION", petId: b.petId }],
      [createCaptureSessionAction as never, { purpose: "PET_VERIFICATION", petId: b.petId }],
      [uploadCaptureImageAction as never, { sessionId: b.sessionId, kind: "fingerprint", file: nose }],
      [uploadCaptureImageAction as never, { sessionId: b.sessionId, kind: "appearance", file: photo }],
      [startCaptureJobAction as never, { purpose: "PET_VERIFICATION", sessionId: b.sessionId, petId: b.petId }],
      [startCaptureJobAction as never, { purpose: "PET_PROFILE_REGISTRATION", sessionId: b.sessionId, petId: b.petId }],
      [startCaptureJobAction as never, { purpose: "PET_IDENTIFICATION", sessionId: b.sessionId }],
      [jobProgressAction as never, { jobId: b.jobId }],
    ];
    for (const [action, input] of staffCases) await expectRefused(action, a.staff, input);
    const ownerCases: [DashboardAction<never, unknown>, unknown][] = [
      [deactivateKeyAction as never, { keyId: b.keyId }],
      [changeRoleAction as never, { userId: b.memberId, role: "owner" }],
      [revokeInvitationAction as never, { invitationId: b.invitationId }],
      [removeTeamMemberAction as never, { userId: b.memberId }],
      [resetMemberPasswordAction as never, { userId: b.memberId, password: "taken-over-password" }],
      [unlockMemberAction as never, { userId: b.memberId }],
      [updatePetAction as never, { petId: b.petId, metadata: "{}", breed: "x" }],
    ];
    for (const [action, input] of ownerCases) await expectRefused(action, a.owner, input);
    expect(await snapshotOf(b)).toEqual(before);
  });

  it("the same calls succeed for account B's own users (the scope is what refuses A)", async () => {
    const update = await invokeAction(updatePetAction, db, b.staff, { petId: b.petId, metadata: '{"name":"renamed"}', breed: "Renamed" });
    expect(update.ok).toBe(true);
    const progress = await invokeAction(jobProgressAction, db, b.staff, { jobId: b.jobId });
    expect(progress).toEqual({ ok: true, data: { status: "FAILED", summary: "secret summary" } });
    const deactivate = await invokeAction(deactivateKeyAction, db, b.owner, { keyId: b.keyId });
    expect(deactivate.ok).toBe(true);
    await db.pet.update({ where: { id: b.petId }, data: { breed: "Original", metadata: '{"name":"orig"}' } });
    await db.apiKey.update({ where: { id: b.keyId }, data: { active: true } });
  });

  it("queries scoped to account A never return account B's rows", async () => {
    const pets = await listPetsPage(db, a.accountId, petListQuerySchema.parse({ q: b.petId }));
    expect(pets).toEqual({ rows: [], total: 0 });
    expect((await listPetsPage(db, b.accountId, petListQuerySchema.parse({ q: b.petId }))).total).toBe(1);
    await expect(getPetDetail(db, a.accountId, b.petId)).rejects.toMatchObject({ failure: "PetNotFound" });
    expect(await getJobDetail(db, a.accountId, b.jobId)).toBeNull();
    expect((await getJobDetail(db, b.accountId, b.jobId))?.failure?.summary).toBe("secret summary");
    const jobs = await listJobs(db, a.accountId, jobListQuerySchema.parse({ petId: b.petId }));
    expect(jobs.total).toBe(0);
    await expect(getJobProgress(db, a.accountId, b.jobId)).rejects.toThrow("does not exist");
    const usage = await getUsageReport(db, a.accountId);
    expect(usage.failureToEnrol).toEqual({ failed: 1, finished: 1, rate: 1 }); // A's own failed job only
    await db.auditLog.create({ data: { accountId: b.accountId, actor: "someone@b.test", action: "pet.update", target: b.petId } });
    const audit = await listAuditLog(db, a.accountId, auditQuerySchema.parse({ who: "someone@b.test" }));
    expect(audit.total).toBe(0);
    expect((await listAuditLog(db, b.accountId, auditQuerySchema.parse({ who: "someone@b.test" }))).total).toBe(1);
    expect((await listAuditLog(db, null, auditQuerySchema.parse({ who: "someone@b.test" }))).rows[0].accountId).toBe(b.accountId); // operators
  });

  it("usage counts only the account's own calls, summed per day and key", async () => {
    const route = "GET /v2/pets/{petId}";
    const calls = (t: Tenant, n: number, status = 200) =>
      Array.from({ length: n }, () => recordApiCall(db, { accountId: t.accountId, apiKeyId: t.keyId, method: "GET", route, status, latencyMs: 1 }));
    calls(a, 3);
    calls(a, 2, 404);
    calls(b, 7);
    const report = await getUsageReport(db, a.accountId); // flushes what this process buffered
    expect(report.keys).toEqual(["rk_test…"]);
    expect(report.callsByDay.at(-1)).toEqual({ day: report.days.at(-1), "rk_test…": 5 });
    expect(report.callsByDay.slice(0, -1).every((d) => Object.keys(d).length === 1)).toBe(true);
    expect(await summariseUsage(db, a.accountId)).toEqual([
      { route, status: 200, calls: 3 },
      { route, status: 404, calls: 2 },
    ]);
    expect(await summariseUsage(db, b.accountId)).toEqual([{ route, status: 200, calls: 7 }]);
  });

  it("serves an uploaded image only to signed-in users of its account", async () => {
    expect(await readImageForUser(db, a.staff, "fingerprint", b.imageId)).toBeNull();
    expect(await readImageForUser(db, null, "fingerprint", b.imageId)).toBeNull();
    expect(await readImageForUser(db, b.staff, "fingerprint", b.imageId)).toBeInstanceOf(Uint8Array);
    expect(await readImageForUser(db, b.staff, "other", b.imageId)).toBeNull();
  });
});

describe("roles are checked on the server", () => {
  it("refuses actions outside the role, whatever the UI shows", async () => {
    expect(await invokeAction(issueKeyAction, db, a.staff, {})).toEqual({ ok: false, error: { message: "You are not allowed to do this." } });
    expect((await invokeAction(inviteTeamMemberAction, db, a.staff, { email: "x@a.test", role: "owner" })).ok).toBe(false);
    expect((await invokeAction(selectSearchPoolAction, db, a.staff, { pool: "default" })).ok).toBe(false);
    expect((await invokeAction(setAccountSuspendedAction, db, a.owner, { accountId: b.accountId, suspended: true })).ok).toBe(false);
    const support = { ...a.staff, role: "support" as const };
    expect((await invokeAction(createPetAction, db, support, { species: "DOG" })).ok).toBe(false);
    expect((await invokeAction(createPetAction, db, null, { species: "DOG" })).ok).toBe(false);
    expect((await db.account.findUnique({ where: { id: b.accountId } }))?.suspended).toBe(false);
  });

  it("reads the request's origin only for the action that puts it in a link (an invitation)", async () => {
    const origins: string[] = [];
    const origin = async () => (origins.push("read"), "https://clinic.example");
    expect((await invokeAction(issueKeyAction, db, a.owner, { name: "origin check" }, origin)).ok).toBe(true);
    expect((await invokeAction(jobProgressAction, db, a.staff, { jobId: a.jobId }, origin)).ok).toBe(true);
    expect(origins).toEqual([]);
    expect((await invokeAction(inviteTeamMemberAction, db, a.owner, { email: "origin@a.test", role: "staff" }, origin)).ok).toBe(true);
    expect(origins).toEqual(["read"]);
  });

  it("validates input with zod and answers field errors", async () => {
    const result = await invokeAction(createPetAction, db, a.staff, { species: "HAMSTER", metadata: "{not json" });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(Object.keys(result.error.fields ?? {}).sort()).toEqual(["metadata", "species"]);
  });

  it("refuses what uses the service while the account is suspended, as the API does (10010), and allows it again once reinstated", async () => {
    const account = await db.account.create({ data: { name: "suspended", suspended: true, plan: { connect: { name: "standard" } } } });
    const staff = await db.user.create({ data: { email: "staff@suspended.test", passwordHash: "x", role: "staff", accountId: account.id } });
    const user: SessionUser = { id: staff.id, email: staff.email, role: "staff", accountId: account.id };
    const pet = await db.pet.create({ data: { accountId: account.id, species: "DOG" } });
    const session = await db.captureSession.create({
      data: { accountId: account.id, species: "DOG", purpose: "PET_VERIFICATION", petId: pet.id, expiresAt: new Date(Date.now() + 3_600_000) },
    });
    const file = new File([new Uint8Array(await noseCapture(1, 0))], "x.jpg", { type: "image/jpeg" });
    const attempts: [DashboardAction<never, unknown>, unknown][] = [
      [createPetAction as DashboardAction<never, unknown>, { species: "DOG" }],
      [updatePetAction as DashboardAction<never, unknown>, { petId: pet.id, breed: "Changed" }],
      [createCaptureSessionAction as DashboardAction<never, unknown>, { purpose: "PET_IDENTIFICATION", species: "DOG" }],
      [uploadCaptureImageAction as DashboardAction<never, unknown>, { sessionId: session.id, kind: "fingerprint", file }],
      [startCaptureJobAction as DashboardAction<never, unknown>, { purpose: "PET_IDENTIFICATION", sessionId: session.id }],
    ];
    for (const [action, input] of attempts) {
      const result = await invokeAction(action, db, user, input);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.message).toMatch(/suspended/i);
    }
    expect(await db.pet.count({ where: { accountId: account.id } })).toBe(1);
    expect(await db.fingerprintImage.count({ where: { sessionId: session.id } })).toBe(0);
    await db.account.update({ where: { id: account.id }, data: { suspended: false } });
    expect((await invokeAction(createPetAction, db, user, { species: "DOG" })).ok).toBe(true);
  });

  it(`issues at most ${MAX_ACTIVE_KEYS_PER_ACCOUNT} active keys per account (each key has its own rate limit)`, async () => {
    const account = await db.account.create({ data: { name: "keys", plan: { connect: { name: "standard" } } } });
    const owner = await db.user.create({ data: { email: "owner@keys.test", passwordHash: "x", role: "owner", accountId: account.id } });
    const user: SessionUser = { id: owner.id, email: owner.email, role: "owner", accountId: account.id };
    const results = [];
    for (let i = 0; i < MAX_ACTIVE_KEYS_PER_ACCOUNT + 2; i++) results.push(await invokeAction(issueKeyAction, db, user, {}));
    expect(results.filter((r) => r.ok)).toHaveLength(MAX_ACTIVE_KEYS_PER_ACCOUNT);
    expect(await db.apiKey.count({ where: { accountId: account.id, active: true } })).toBe(MAX_ACTIVE_KEYS_PER_ACCOUNT);
  });

  it("an owner's reset sets only the new hash, lifts a lockout and ends the member's sessions; an expired key leaves the cap", async () => {
    await db.user.update({ where: { id: b.memberId }, data: { failedSignIns: 5, lockedUntil: new Date(Date.now() + 900_000) } });
    const before = await db.user.findUniqueOrThrow({ where: { id: b.memberId } });
    expect((await invokeAction(unlockMemberAction, db, b.owner, { userId: b.memberId })).ok).toBe(true);
    expect(await db.user.findUniqueOrThrow({ where: { id: b.memberId } })).toMatchObject({ failedSignIns: 0, lockedUntil: null, passwordHash: before.passwordHash });
    const short = await invokeAction(resetMemberPasswordAction, db, b.owner, { userId: b.memberId, password: "short" });
    expect(short.ok).toBe(false);
    expect((await invokeAction(resetMemberPasswordAction, db, b.owner, { userId: b.memberId, password: "a-new-long-password" })).ok).toBe(true);
    const after = await db.user.findUniqueOrThrow({ where: { id: b.memberId } });
    expect(after.passwordHash).not.toBe(before.passwordHash);
    expect(after.passwordHash).toMatch(/^\$argon2id\$/);
    expect(after.sessionVersion).toBe(before.sessionVersion + 1);
    const logged = await db.auditLog.findMany({ where: { accountId: b.accountId, target: b.memberId } });
    expect(logged.map((e) => e.action).sort()).toEqual(["user.password-reset", "user.unlock"]);
    expect(JSON.stringify(logged)).not.toContain("a-new-long-password");

    const account = await db.account.create({ data: { name: "expiring keys", plan: { connect: { name: "standard" } } } });
    const owner = await db.user.create({ data: { email: "owner@expiring.test", passwordHash: "x", role: "owner", accountId: account.id } });
    const user: SessionUser = { id: owner.id, email: owner.email, role: "owner", accountId: account.id };
    for (let i = 0; i < MAX_ACTIVE_KEYS_PER_ACCOUNT; i++) expect((await invokeAction(issueKeyAction, db, user, { name: `k${i}`, expiresInDays: 30 })).ok).toBe(true);
    expect((await invokeAction(issueKeyAction, db, user, {})).ok).toBe(false);
    await db.apiKey.updateMany({ where: { accountId: account.id, name: "k0" }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await invokeAction(issueKeyAction, db, user, { name: "after expiry" })).ok).toBe(true);
    expect((await invokeAction(issueKeyAction, db, user, { expiresInDays: 7 })).ok).toBe(false); // 7 is not an offered expiry
    const named = await db.apiKey.findFirstOrThrow({ where: { accountId: account.id, name: "k1" } });
    expect(named.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
  });

  it("records who did what in the audit log", async () => {
    const created = await invokeAction(createPetAction, db, a.staff, { species: "CAT", breed: "Siamese" });
    expect(created.ok).toBe(true);
    const entry = await db.auditLog.findFirst({ where: { accountId: a.accountId, action: "pet.create" } });
    expect(entry).toMatchObject({ actor: a.staff.email, userId: a.staff.id, target: created.ok ? created.data.id : "" });
  });
});
