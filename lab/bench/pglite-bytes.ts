/**
 * npx tsx lab/bench/pglite-bytes.ts: what PGlite (the embedded default's database, run on the web process's event
 * loop) costs to read and write image bytes: read as `bytea` through its query API, as base64 text, and in the binary
 * format `imageRows` reads them in (lib/db/binary-rows.ts); written as `bytea` and as base64 text, the way
 * `writeImageBytes` (lib/jobs/templates.ts) writes them. Three 120 KB values (a 1:N probe session's templates): median of 7 rounds. Prints
 * figures only.
 */
import { PGlite } from "@electric-sql/pglite";
import { Prisma } from "@/lib/generated/prisma/client";
import { pgliteBinaryRows } from "@/lib/db/binary-rows";

const BYTES = 120_000;
const ROUNDS = 7;
const db = new PGlite();
await db.exec("CREATE TABLE t (id int, data bytea)");
const value = Uint8Array.from({ length: BYTES }, (_, i) => (i * 2654435761) >>> 24);
for (let i = 0; i < 3; i++) await db.query("INSERT INTO t VALUES ($1, $2)", [i, value]);

async function timed(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
}

const readBytea = await timed(() => db.query("SELECT data FROM t"));
const readBase64 = await timed(async () => {
  const { rows } = await db.query<{ data: string }>("SELECT encode(data, 'base64') AS data FROM t");
  return rows.map((row) => Buffer.from(row.data, "base64"));
});
const readBinary = await timed(() => pgliteBinaryRows(db, Prisma.sql`SELECT data FROM t`));
const writeBytea = await timed(() => db.query("UPDATE t SET data = $1 WHERE id = 0", [value]));
const writeBase64 = await timed(() => db.query("UPDATE t SET data = decode($1, 'base64') WHERE id = 0", [Buffer.from(value).toString("base64")]));
console.log(`three ${BYTES / 1000} KB values read: bytea ${readBytea.toFixed(1)} ms, base64 ${readBase64.toFixed(1)} ms, binary format ${readBinary.toFixed(1)} ms`);
console.log(`one ${BYTES / 1000} KB value written: bytea ${writeBytea.toFixed(1)} ms, base64 ${writeBase64.toFixed(1)} ms`);
await db.close();
