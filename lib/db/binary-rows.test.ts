import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "@/lib/generated/prisma/client";
import { openTestDatabase } from "@/lab/test-support/database";
import { ensurePostgres, PG_ADMIN_URL } from "@/lab/test-support/server";
import type { OpenDatabase } from "./connect";
import { binaryRows, ResponseDecoder, rowsWithBytes, type BinaryRows } from "./binary-rows";
import { postgresBinaryRows } from "./postgres-binary";

describe.each(["pglite", "postgres"] as const)("binary rows (%s)", (mode) => {
  let open: OpenDatabase;
  let close: () => Promise<void>;
  let rows: BinaryRows;

  beforeAll(async () => {
    ({ open, close } = await openTestDatabase(mode, "binary_rows"));
    rows = binaryRows(open.prisma)!;
  }, 120_000);

  afterAll(async () => {
    await close?.();
  });

  it("exist for an opened database only, not for a transaction's client", async () => {
    expect(rows).not.toBeNull();
    expect(binaryRows({} as OpenDatabase["prisma"])).toBeNull();
    expect(await open.prisma.$transaction(async (tx) => binaryRows(tx as OpenDatabase["prisma"]))).toBeNull();
  });

  it("decode each column by its type, parameters given as text, a value larger than the database's output chunks intact", async () => {
    const big = Uint8Array.from({ length: 1_500_000 }, (_, i) => (i * 7919) >> 3);
    const result = await rows.query(Prisma.sql`
      SELECT ${"nose é"}::text AS name, decode(${Buffer.from(big).toString("base64")}, 'base64') AS bytes, ''::bytea AS empty,
        NULL::bytea AS missing, ${9_007_199_254_740_993n}::int8 AS big, ${-12}::int4 AS small, 7::int2 AS tiny, ${0.25}::float8 AS half,
        true AS yes, ${null}::text IS NULL AS "nullParameter",
        (${new Date(Date.UTC(2026, 11, 2, 10, 30, 15, 250))}::timestamptz AT TIME ZONE 'UTC')::text AS "dateParameter"
      FROM generate_series(1, 3) AS n`);
    expect(result).toHaveLength(3);
    const [row] = result;
    expect(row.name).toBe("nose é");
    expect(Buffer.from(row.bytes as Uint8Array).equals(Buffer.from(big))).toBe(true);
    expect(row.empty).toEqual(new Uint8Array(0));
    expect(row.missing).toBeNull();
    expect(row.big).toBe(9_007_199_254_740_993n);
    expect([row.small, row.tiny, row.half, row.yes, row.nullParameter]).toEqual([-12, 7, 0.25, true, true]);
    expect(row.dateParameter).toBe("2026-12-02 10:30:15.25");
  });

  it("read what the ORM wrote, by parameters", async () => {
    const account = await open.prisma.account.create({ data: { name: "Binary clinic" } });
    const [row] = await rows.query(Prisma.sql`SELECT id, name FROM "Account" WHERE id = ${account.id}`);
    expect(row).toEqual({ id: account.id, name: "Binary clinic" });
    expect(await rows.query(Prisma.sql`SELECT id FROM "Account" WHERE id = ${"no-such-account"}`)).toEqual([]);
  });

  it("throw the database's refusal, an undecoded type and an unsupported parameter clearly, and leave the database answering", async () => {
    await expect(rows.query(Prisma.sql`SELECT * FROM "NoSuchTable"`)).rejects.toThrow(/relation "NoSuchTable" does not exist \(SQLSTATE 42P01\)/);
    await expect(rows.query(Prisma.sql`SELECT 1 / ${0}::int AS x`)).rejects.toThrow(/division by zero/);
    await expect(rows.query(Prisma.sql`SELECT now() AS at`)).rejects.toThrow(/column "at" has type oid 1184/);
    await expect(rows.query(Prisma.sql`SELECT ${{ at: 1 }} AS at`)).rejects.toThrow(/object parameter is not supported/);
    // Nothing left open: the ORM's transactions and reads go on, on every connection.
    for (let i = 0; i < 12; i++) {
      const name = await open.prisma.$transaction(async (tx) => (await tx.account.create({ data: { name: `After errors ${i}` } })).name);
      expect(name).toBe(`After errors ${i}`);
    }
    expect(await rows.query(Prisma.sql`SELECT 2::int4 AS two`)).toEqual([{ two: 2 }]);
  });

  it("never run inside another caller's transaction: a read made while one is open sees none of its rolled-back writes", async () => {
    let started!: () => void;
    const inside = new Promise<void>((resolve) => (started = resolve));
    const transaction = open.prisma
      .$transaction(async (tx) => {
        await tx.account.create({ data: { name: "Rolled back" } });
        started();
        await new Promise((resolve) => setTimeout(resolve, 200));
        throw new Error("roll back");
      })
      .catch((error: Error) => error.message);
    await inside;
    const read = await rows.query(Prisma.sql`SELECT count(*)::int4 AS n FROM "Account" WHERE name = ${"Rolled back"}`);
    expect(await transaction).toBe("roll back");
    expect(read).toEqual([{ n: 0 }]);
  });

  it("run beside the ORM's queries, each answer its own", async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? rows.query(Prisma.sql`SELECT ${i}::int4 AS n, decode(repeat('ab', ${1000 + i}), 'hex') AS bytes`).then(([row]) => [row.n, (row.bytes as Uint8Array).length])
          : open.prisma.$queryRaw<{ n: number }[]>`SELECT ${i}::int4 AS n`.then(([row]) => [row.n, null]),
      ),
    );
    expect(answers).toEqual(Array.from({ length: 40 }, (_, i) => [i, i % 2 === 0 ? 1000 + i : null]));
  });
});

describe("binary rows on a PostgreSQL connection", () => {
  let pool: pg.Pool;

  beforeAll(async () => {
    await ensurePostgres();
    // One connection: whatever a binary read leaves behind, the next query meets it.
    pool = new pg.Pool({ connectionString: PG_ADMIN_URL, max: 1 });
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
  });

  it("give the connection back to the driver as it was: its next queries, plain and prepared, answer", async () => {
    expect(await postgresBinaryRows(pool, Prisma.sql`SELECT ${"one"}::text AS a`, 5_000)).toEqual([{ a: "one" }]);
    expect((await pool.query("SELECT 1::int AS one")).rows).toEqual([{ one: 1 }]);
    expect((await pool.query({ name: "two", text: "SELECT $1::int AS two", values: [2] })).rows).toEqual([{ two: 2 }]);
    await expect(postgresBinaryRows(pool, Prisma.sql`SELECT * FROM "NoSuchTable"`, 5_000)).rejects.toThrow(/SQLSTATE 42P01/);
    expect((await pool.query("SELECT 3::int AS three")).rows).toEqual([{ three: 3 }]);
    expect(pool.totalCount).toBe(1);
  });

  it("destroy a connection that closes or does not answer in time, and the pool goes on with a new one", async () => {
    await expect(postgresBinaryRows(pool, Prisma.sql`SELECT pg_terminate_backend(pg_backend_pid()) AS gone`, 5_000)).rejects.toThrow(/terminat|closed/i);
    expect((await pool.query("SELECT 4::int AS four")).rows).toEqual([{ four: 4 }]);
    const started = Date.now();
    await expect(postgresBinaryRows(pool, Prisma.sql`SELECT 1::int4 AS slept FROM pg_sleep(3)`, 200)).rejects.toThrow(/did not answer within 200 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await pool.query("SELECT 5::int AS five")).rows).toEqual([{ five: 5 }]);
  });
});

describe("a binary response", () => {
  const message = (type: string, ...parts: Buffer[]) => {
    const body = Buffer.concat(parts);
    const head = Buffer.alloc(5);
    head.write(type, 0, "latin1");
    head.writeInt32BE(4 + body.length, 1);
    return Buffer.concat([head, body]);
  };
  const int16 = (n: number) => Buffer.from([n >> 8, n & 255]);
  const int32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  };
  const column = (name: string, oid: number) => Buffer.concat([Buffer.from(`${name}\0`), int32(0), int16(0), int32(oid), int16(-1), int32(-1), int16(1)]);
  const row = (id: string, bytes: Buffer | null) =>
    message("D", int16(2), int32(id.length), Buffer.from(id), ...(bytes ? [int32(bytes.length), bytes] : [int32(-1)]));
  const values = [Buffer.alloc(0), null, Buffer.from([1, 2, 3]), Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 13) & 255))];
  const response = Buffer.concat([
    message("1"),
    message("2"),
    message("T", int16(2), column("id", 25), column("keys", 17)),
    ...values.map((bytes, i) => row(`pet-${i}`, bytes)),
    message("C", Buffer.from("SELECT 4\0")),
    message("Z", Buffer.from("I")),
  ]);
  const decode = (bytes: Buffer, size: number) => {
    const decoder = new ResponseDecoder();
    // Each chunk a view of one reused buffer, as PGlite's memory is: a decoder keeping a view would be overwritten.
    const scratch = new Uint8Array(size);
    for (let at = 0; at < bytes.length; at += size) {
      const chunk = scratch.subarray(0, Math.min(size, bytes.length - at));
      chunk.set(bytes.subarray(at, at + chunk.length));
      expect(decoder.push(chunk)).toBe(chunk.length);
    }
    return decoder.finish();
  };

  it("is decoded the same however it is cut into chunks, its bytes copied out of them", () => {
    const expected = values.map((bytes, i) => ({ id: `pet-${i}`, keys: bytes ? new Uint8Array(bytes) : null }));
    for (const size of [1, 2, 3, 4, 5, 6, 7, 11, 4096, response.length]) expect(decode(response, size)).toEqual(expected);
  });

  it("throws when it ends inside a message, is malformed, or holds an error, after reading on to its end", () => {
    expect(() => decode(response.subarray(0, response.length - 3), 7)).toThrow(/truncated/);
    expect(() => decode(response.subarray(0, 3), 7)).toThrow(/truncated/);
    expect(() => decode(Buffer.concat([message("1"), Buffer.from([0x44, 0, 0, 0, 2]), message("Z", Buffer.from("I"))]), 3)).toThrow(/malformed/);
    const refusal = message("E", Buffer.from("SERROR\0C42P01\0Mrelation \"nope\" does not exist\0\0"));
    expect(() => decode(Buffer.concat([message("1"), refusal, message("Z", Buffer.from("I"))]), 5)).toThrow(/relation "nope" does not exist \(SQLSTATE 42P01\)/);
  });
});

describe.each(["pglite", "postgres"] as const)("rows with bytes (%s)", (mode) => {
  it("give the byte columns as bytes of their own and take array parameters, whatever their elements hold", async () => {
    const database = await openTestDatabase(mode, "rows_with_bytes");
    try {
      const awkward = ["plain", 'a "quoted", comma', "back\\slash", "{braces}", "NULL", "é"];
      const stored = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 13) & 255);
      const found = await rowsWithBytes<{ element: string; ordinal: bigint; bytes: Uint8Array; none: Uint8Array | null }>(
        database.open.prisma,
        ["bytes", "none"],
        (bytes) => Prisma.sql`
          SELECT element, ordinal, ${bytes(Prisma.sql`decode(${Buffer.from(stored).toString("base64")}, 'base64')`)} AS bytes, ${bytes(Prisma.sql`NULL::bytea`)} AS none
          FROM unnest(${[...awkward, null]}::text[]) WITH ORDINALITY AS t(element, ordinal)
          WHERE element IS NOT NULL ORDER BY ordinal`,
      );
      expect(found.map((row) => [row.element, Number(row.ordinal)])).toEqual(awkward.map((element, i) => [element, i + 1]));
      for (const row of found) {
        expect(row.bytes).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(row.bytes).equals(Buffer.from(stored))).toBe(true);
        expect(row.none).toBeNull();
      }
      // Each row's bytes its own: changing one changes no other.
      found[0].bytes[0] ^= 255;
      expect(found[1].bytes[0]).toBe(stored[0]);
    } finally {
      await database.close();
    }
  }, 120_000);
});
