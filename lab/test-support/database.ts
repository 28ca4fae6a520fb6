import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureDefaultPlans } from "@/lib/accounts/plans";
import { openOwnedDatabase } from "@/lib/db";
import type { OpenDatabase } from "@/lib/db/connect";
import { readEnv } from "@/lib/env";
import { adminSql, ensurePostgres, PG_ADMIN_URL } from "./server";

/** Databases opened by this process so far: each gets a name of its own, even under one label. */
let opened = 0;

/**
 * A migrated database of its own for a test, in either mode: PGlite in a temporary folder, or a
 * PostgreSQL database named after the label, process and count. `close` removes it.
 */
export async function openTestDatabase(mode: "pglite" | "postgres", label: string): Promise<{ open: OpenDatabase; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rhinarium-${label}-`));
  const databaseName = `rhinarium_${label}_${process.pid}_${opened++}`;
  let databaseUrl = "";
  if (mode === "postgres") {
    await ensurePostgres();
    await adminSql(`DROP DATABASE IF EXISTS ${databaseName}`);
    await adminSql(`CREATE DATABASE ${databaseName}`);
    databaseUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${databaseName}`);
  }
  const open = await openOwnedDatabase(readEnv({ DATA_DIR: dir, DATABASE_URL: databaseUrl } as unknown as NodeJS.ProcessEnv), "cli");
  await ensureDefaultPlans(open.prisma);
  return {
    open,
    async close() {
      await open.close();
      fs.rmSync(dir, { recursive: true, force: true });
      if (mode === "postgres") await adminSql(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    },
  };
}
