import { afterAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "@/lib/db/connect";
import { openTestDatabase } from "@/lab/test-support/database";
import { listPetPages } from "./pets";

// GET /v2/pets reads an account's pets in pages (keyset on createdAt, id), yielding between pages.

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function open(mode: "pglite" | "postgres"): Promise<OpenDatabase> {
  const { open: db, close } = await openTestDatabase(mode, "listpets");
  cleanups.push(close);
  return db;
}

describe.each(["pglite", "postgres"] as const)("listing an account's pets (%s)", (mode) => {
  it("answers every pet of the account once, oldest first with ties by id, across page boundaries, and yields between pages", async () => {
    const db = await open(mode);
    const p = db.prisma;
    const [a, b] = await Promise.all(["A", "B"].map((name) => p.account.create({ data: { name }, select: { id: true } })));
    const tie = new Date("2026-11-27T00:00:00Z");
    // Five pets share one creation time: the page boundaries fall inside the tie.
    for (let i = 0; i < 10; i++) {
      await p.pet.create({ data: { accountId: a.id, species: "DOG", metadata: `{"n":${i}}`, createdAt: i < 5 ? tie : new Date(tie.getTime() + i * 1000) } });
    }
    for (let i = 0; i < 3; i++) await p.pet.create({ data: { accountId: b.id, species: "CAT" } });
    const expected = (await p.pet.findMany({ where: { accountId: a.id }, select: { id: true, createdAt: true } }))
      .sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || (x.id < y.id ? -1 : 1))
      .map((x) => x.id);

    const order: string[] = [];
    const pages: string[][] = [];
    for await (const page of listPetPages(db.prisma, a.id, 3)) {
      if (pages.length === 0) setImmediate(() => order.push("other work"));
      pages.push(page.map((pet) => pet.id));
      order.push(`page ${pages.length}`);
    }
    expect(pages.map((page) => page.length)).toEqual([3, 3, 3, 1]);
    expect(pages.flat()).toEqual(expected);
    expect(order.slice(0, 3)).toEqual(["page 1", "other work", "page 2"]);

    const all: string[] = [];
    for await (const page of listPetPages(db.prisma, b.id)) all.push(...page.map((pet) => pet.id));
    expect(all).toHaveLength(3);
    const none: string[] = [];
    for await (const page of listPetPages(db.prisma, "no-such-account")) none.push(...page.map((pet) => pet.id));
    expect(none).toEqual([]);
  });
});
