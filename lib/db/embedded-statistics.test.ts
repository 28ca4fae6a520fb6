import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "@/lib/db/connect";
import { openTestDatabase } from "@/lab/test-support/database";
import { analyzeChangedTables } from "./embedded-statistics";

// The embedded database has no autovacuum: its owner gathers the planner's statistics at open and when a table's size
// changed by more than a tenth since.

let open: OpenDatabase;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ open, close } = await openTestDatabase("pglite", "statistics"));
}, 120_000);

afterAll(async () => {
  await close?.();
});

/** The planner's row estimate of a table (-1: never analysed). */
async function estimatedRows(table: string): Promise<number> {
  const [row] = await open.prisma.$queryRaw<{ rows: number }[]>`SELECT reltuples::float8 AS rows FROM pg_class WHERE relname = ${table} AND relkind = 'r'`;
  return row.rows;
}

describe("the embedded database's statistics", () => {
  it("are gathered for every table when the owner opens it", async () => {
    const never = await open.prisma.$queryRaw<{ relname: string }[]>`
      SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.reltuples < 0`;
    expect(never).toEqual([]);
    expect(await analyzeChangedTables(open.prisma)).toEqual([]);
  });

  it("are gathered again for a table that grew, and only for it", async () => {
    expect(await estimatedRows("Account")).toBeLessThan(100);
    await open.prisma.account.createMany({ data: Array.from({ length: 3000 }, (_, i) => ({ name: `Clinic ${i}` })) });
    expect(await analyzeChangedTables(open.prisma)).toEqual(['"Account"']);
    expect(await estimatedRows("Account")).toBeGreaterThanOrEqual(3000);
    // Analysed: the same size is not analysed again.
    expect(await analyzeChangedTables(open.prisma)).toEqual([]);
  });

  it("lead the planner to the index for a gallery's next batch of pets", async () => {
    const account = await open.prisma.account.create({ data: { name: "Many pets" } });
    await open.prisma.pet.createMany({ data: Array.from({ length: 5000 }, (_, i) => ({ id: `pet-${String(i).padStart(5, "0")}`, accountId: account.id, species: "DOG" as const })) });
    await analyzeChangedTables(open.prisma);
    const plan = await open.prisma.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(
      `EXPLAIN SELECT p.id FROM "Pet" p WHERE p."accountId" = $1 AND p.id > $2 ORDER BY p.id LIMIT 1000`,
      account.id,
      "pet-01000",
    );
    const text = plan.map((row) => row["QUERY PLAN"]).join("\n");
    // Not every pet after the cursor read and sorted, as a plan without statistics does.
    expect(text).not.toMatch(/Sort/);
    expect(text).toMatch(/Index Scan/);
  });
});
