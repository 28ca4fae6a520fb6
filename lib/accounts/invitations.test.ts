import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { verify } from "@node-rs/argon2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openOwnedDatabase } from "@/lib/db";
import type { Db, OpenDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { createTestDatabase, type TestDatabase } from "@/lab/test-support/scale";
import { invitationTokenIn, outboxMessages } from "@/lab/test-support/outbox";
import { ensureDefaultPlans } from "./plans";
import {
  acceptInvitation,
  InvitationInvalidError,
  InvitationNotSentError,
  InvitationRefusedError,
  invitationOf,
  inviteMember,
  MAX_PENDING_INVITATIONS,
  pendingInvitations,
  revokeInvitation,
} from "./invitations";

const ORIGIN = "https://clinic.example:8443";

// Team invitations: the link goes to the address only, is accepted once, and the inviting owner sees the same
// answer whether or not the address already signs in to another account (no cross-tenant enumeration).
for (const mode of ["pglite", "postgres"] as const) {
  describe(`team invitations (${mode})`, () => {
    let dir: string;
    let pg: TestDatabase | undefined;
    let open: OpenDatabase;
    let db: Db;
    let clinic: string;
    let other: string;
    let owner: { id: string; email: string };
    const previousDataDir = process.env.DATA_DIR;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), `rhinarium-invitations-${mode}-`));
      process.env.DATA_DIR = dir;
      if (mode === "postgres") pg = await createTestDatabase("invitations");
      open = await openOwnedDatabase(readEnv({ DATA_DIR: dir, DATABASE_URL: pg?.url ?? "" } as unknown as NodeJS.ProcessEnv), "cli");
      db = open.prisma;
      await ensureDefaultPlans(db);
      clinic = (await db.account.create({ data: { name: "Clinic A" } })).id;
      other = (await db.account.create({ data: { name: "Clinic B" } })).id;
      owner = await db.user.create({ data: { email: "owner@a.test", passwordHash: "x", role: "owner", accountId: clinic }, select: { id: true, email: true } });
      await db.user.create({ data: { email: "vet@b.test", passwordHash: "x", role: "staff", accountId: other } });
    });

    afterAll(async () => {
      process.env.DATA_DIR = previousDataDir;
      await open?.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const invite = (email: string, role: "staff" | "owner" = "staff") => inviteMember(db, { accountId: clinic, email, role, inviter: owner }, ORIGIN);
    const lastMail = () => outboxMessages(dir).at(-1)!;

    it("mails a one-time link to the address; accepting it creates the user with the invited role", async () => {
      const before = outboxMessages(dir).length;
      const { invitationId } = await invite("New.Vet@A.test");
      expect(outboxMessages(dir)).toHaveLength(before + 1);
      const mail = lastMail();
      expect(fs.statSync(mail.file).mode & 0o777).toBe(0o600);
      expect(mail.to).toBe("new.vet@a.test");
      expect(mail.subject).toBe("Join Clinic A on Rhinarium");
      const token = invitationTokenIn(mail.text)!;
      expect(mail.text).toContain(`${ORIGIN}/invite/${token}`);
      expect(token.length).toBeGreaterThanOrEqual(40);
      // Only the hash is stored.
      expect(JSON.stringify(await db.invitation.findUnique({ where: { id: invitationId } }))).not.toContain(token);
      expect(await invitationOf(db, token)).toEqual({ email: "new.vet@a.test", role: "staff", accountName: "Clinic A" });

      expect(await acceptInvitation(db, token, "my own password")).toEqual({ email: "new.vet@a.test" });
      const user = await db.user.findUniqueOrThrow({ where: { email: "new.vet@a.test" } });
      expect(user).toMatchObject({ role: "staff", accountId: clinic });
      expect(await verify(user.passwordHash, "my own password")).toBe(true);
      await expect(acceptInvitation(db, token, "another password")).rejects.toBeInstanceOf(InvitationInvalidError);
      expect(await invitationOf(db, token)).toBeNull();
      expect(await pendingInvitations(db, clinic)).toEqual([]);
      const audit = await db.auditLog.findMany({ where: { accountId: clinic }, orderBy: { createdAt: "asc" }, select: { action: true, actor: true } });
      expect(audit).toEqual([
        { action: "user.invite", actor: "owner@a.test" },
        { action: "user.create", actor: "new.vet@a.test" },
      ]);
    });

    it("answers the owner alike for an address that signs in elsewhere, and tells only the address", async () => {
      const fresh = await invite("fresh@a.test");
      const freshMail = lastMail();
      const taken = await invite("VET@b.test");
      const takenMail = lastMail();
      // What the owner sees: an id, and a pending row of the same shape.
      expect(Object.keys(taken)).toEqual(Object.keys(fresh));
      const rows = await pendingInvitations(db, clinic);
      const shapeOf = (row: (typeof rows)[number]) => Object.keys(row).sort();
      expect(rows.map((r) => r.email).sort()).toEqual(["fresh@a.test", "vet@b.test"]);
      expect(shapeOf(rows[0])).toEqual(shapeOf(rows[1]));
      expect(takenMail.subject).toBe(freshMail.subject);
      // What the address reads: no link, and why.
      expect(invitationTokenIn(freshMail.text)).not.toBeNull();
      expect(invitationTokenIn(takenMail.text)).toBeNull();
      expect(takenMail.text).toContain("already signs in to Rhinarium for another account");
      expect(takenMail.text).not.toContain("Clinic B");
      // The other account's user is untouched.
      expect(await db.user.findUniqueOrThrow({ where: { email: "vet@b.test" } })).toMatchObject({ accountId: other, role: "staff" });
    });

    it("refuses a member of the owner's own team, and caps pending invitations", async () => {
      await expect(invite("owner@a.test")).rejects.toBeInstanceOf(InvitationRefusedError);
      const pendingNow = (await pendingInvitations(db, clinic)).length;
      await db.invitation.createMany({
        data: Array.from({ length: MAX_PENDING_INVITATIONS - pendingNow }, (_, i) => ({
          accountId: clinic,
          email: `filler${i}@a.test`,
          role: "staff" as const,
          tokenHash: `filler-${mode}-${i}`,
          expiresAt: new Date(Date.now() + 60_000),
        })),
      });
      await expect(invite("one-too-many@a.test")).rejects.toThrow(/pending invitations/);
      await db.invitation.deleteMany({ where: { email: { startsWith: "filler" } } });
    });

    it("a second invitation of one address replaces the first link; withdrawn and expired links are dead", async () => {
      await invite("twice@a.test");
      const first = invitationTokenIn(lastMail().text)!;
      await invite("twice@a.test", "owner");
      const second = invitationTokenIn(lastMail().text)!;
      expect(await invitationOf(db, first)).toBeNull();
      expect(await invitationOf(db, second)).toMatchObject({ role: "owner" });

      const row = (await pendingInvitations(db, clinic)).find((r) => r.email === "twice@a.test")!;
      expect(await revokeInvitation(db, other, row.id)).toBe(false);
      expect(await revokeInvitation(db, clinic, row.id)).toBe(true);
      await expect(acceptInvitation(db, second, "a long password")).rejects.toBeInstanceOf(InvitationInvalidError);

      await invite("late@a.test");
      const late = invitationTokenIn(lastMail().text)!;
      await db.invitation.updateMany({ where: { email: "late@a.test" }, data: { expiresAt: new Date(Date.now() - 1000) } });
      expect(await invitationOf(db, late)).toBeNull();
      await expect(acceptInvitation(db, late, "a long password")).rejects.toBeInstanceOf(InvitationInvalidError);
      expect(await db.user.count({ where: { email: { in: ["twice@a.test", "late@a.test"] } } })).toBe(0);
    });

    it("withdraws an invitation whose e-mail the relay refuses, and leaves the earlier one of the address working", async () => {
      await invite("unlucky@a.test");
      const earlier = invitationTokenIn(lastMail().text)!;
      const auditBefore = await db.auditLog.count({ where: { accountId: clinic, action: "user.invite" } });
      // A relay that refuses the connection (nothing listens on the discard port here).
      process.env.SMTP_URL = "smtp://127.0.0.1:9";
      try {
        await expect(invite("unlucky@a.test", "owner")).rejects.toBeInstanceOf(InvitationNotSentError);
      } finally {
        delete process.env.SMTP_URL;
      }
      const pendingRows = (await pendingInvitations(db, clinic)).filter((r) => r.email === "unlucky@a.test");
      expect(pendingRows).toHaveLength(1);
      expect(await invitationOf(db, earlier)).toMatchObject({ role: "staff" });
      expect(await db.auditLog.count({ where: { accountId: clinic, action: "user.invite" } })).toBe(auditBefore);
      await revokeInvitation(db, clinic, pendingRows[0].id);
    });

    it("racing acceptances of one link make one user", async () => {
      await invite("race@a.test");
      const token = invitationTokenIn(lastMail().text)!;
      const results = await Promise.allSettled([1, 2, 3, 4].map((n) => acceptInvitation(db, token, `password number ${n}`)));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(InvitationInvalidError);
      expect(await db.user.count({ where: { email: "race@a.test" } })).toBe(1);
    });
  });
}
