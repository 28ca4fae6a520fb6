import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { readEnv } from "@/lib/env";
import { createMigration } from "./migrate";
import { openOwnedDatabase } from "./index";
import { OwnerBusyError } from "./owner-lock";

export async function runDbCommand(args: string[]): Promise<number> {
  if (args[0] === "create") {
    const name = args[1];
    if (!name) {
      console.error("usage: npm run db:migrate -- create NAME");
      return 2;
    }
    // A scratch in-memory database: the new migration is the difference between the existing
    // migrations and the schema, independent of any real data.
    const scratch = new PGlite();
    const dir = await createMigration(new PrismaPGlite(scratch), name);
    await scratch.close();
    console.log(dir ? `created ${dir}` : "schema and migrations agree: nothing to create");
    return 0;
  }
  const env = readEnv();
  try {
    const db = await openOwnedDatabase(env, "cli");
    await db.close();
    console.log(`migrations applied (${db.mode}${db.mode === "pglite" ? `, ${env.dataDir}` : ""})`);
    return 0;
  } catch (error) {
    if (error instanceof OwnerBusyError) {
      // The running server applied every migration when it started.
      console.error(`${error.message}; it applies migrations at start-up. Stop it to migrate by hand.`);
      return 1;
    }
    throw error;
  }
}
