import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { verify } from "@node-rs/argon2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openOwnedDatabase } from "@/lib/db";
import type { OpenDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { createTestDatabase, type TestDatabase } from "@/lab/test-support/scale";
import { hashApiKey } from "./api-keys";
import { completeFirstRun, FirstRunClosedError, firstRunSchema, needsFirstRun, type FirstRunInput } from "./first-run";

const input = (n: number): FirstRunInput =>
  firstRunSchema.parse({
    operatorEmail: `Ops${n}@Rhinarium.test`,
    operatorPassword: "operator password",
    accountName: `Clinic ${n}`,
    plan: "standard",
    ownerEmail: `owner${n}@clinic.test`,
    ownerPassword: "owner password!",
  });

// The first run happens once: concurrent setups on a database with no user leave exactly one
// operator, one account and one owner, and every later setup is refused.
for (const mode of ["pglite", "postgres"] as const) {
  describe(`first run (${mode})`, () => {
    let dir: string;
    let pg: TestDatabase | undefined;
    let open: OpenDatabase;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), `rhinarium-first-run-${mode}-`));
      if (mode === "postgres") pg = await createTestDatabase("first_run");
      open = await openOwnedDatabase(readEnv({ DATA_DIR: dir, DATABASE_URL: pg?.url ?? "" } as unknown as NodeJS.ProcessEnv), "cli");
    });

    afterAll(async () => {
      await open?.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("is open with no user, runs once under a race, then stays closed", async () => {
      const db = open.prisma;
      expect(await needsFirstRun(db)).toBe(true);
      const results = await Promise.allSettled([1, 2, 3, 4].map((n) => completeFirstRun(db, input(n))));
      const won = results.filter((r) => r.status === "fulfilled");
      const refused = results.filter((r) => r.status === "rejected");
      expect(won).toHaveLength(1);
      expect(refused.map((r) => (r as PromiseRejectedResult).reason)).toEqual([expect.any(FirstRunClosedError), expect.any(FirstRunClosedError), expect.any(FirstRunClosedError)]);
      expect(await needsFirstRun(db)).toBe(false);

      const users = await db.user.findMany({ orderBy: { role: "asc" } });
      expect(users.map((u) => u.role).sort()).toEqual(["admin", "owner"]);
      const [account] = await db.account.findMany({ include: { plan: true } });
      expect(await db.account.count()).toBe(1);
      expect(account.plan?.name).toBe("standard");
      const admin = users.find((u) => u.role === "admin")!;
      const owner = users.find((u) => u.role === "owner")!;
      expect(admin.accountId).toBeNull();
      expect(admin.email).toMatch(/^ops\d@rhinarium\.test$/);
      expect(owner.accountId).toBe(account.id);
      expect(await verify(owner.passwordHash, "owner password!")).toBe(true);
      const { apiKey } = (won[0] as PromiseFulfilledResult<{ apiKey: string; accountId: string }>).value;
      expect(await db.apiKey.findFirst({ where: { hash: hashApiKey(apiKey), accountId: account.id, active: true } })).not.toBeNull();
      expect(await db.auditLog.count({ where: { action: "setup.complete" } })).toBe(1);

      await expect(completeFirstRun(db, input(9))).rejects.toBeInstanceOf(FirstRunClosedError);
      expect(await db.user.count()).toBe(2);
    });
  });
}

describe("the first-run form", () => {
  it("names what is wrong", () => {
    const result = firstRunSchema.safeParse({ ...input(1), operatorPassword: "short", plan: "gold", ownerEmail: "ops1@rhinarium.test" });
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((i) => i.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["operatorPassword", "plan"]));
  });

  it("refuses one address for both people", () => {
    const result = firstRunSchema.safeParse({ ...input(1), ownerEmail: "OPS1@rhinarium.test" });
    expect(result.error?.issues.map((i) => i.path.join("."))).toEqual(["ownerEmail"]);
  });
});
