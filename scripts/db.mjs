#!/usr/bin/env node
// `npm run db:migrate` — apply migrations to the configured database (PGlite in DATA_DIR, or
// DATABASE_URL), in-process with the WASM schema engine.
// `npm run db:migrate -- create NAME` — write a new migration from prisma/schema.prisma.
// The logic is TypeScript shared with the server; tsx loads it.
import { register } from "tsx/esm/api";

register();
const { runDbCommand } = await import("../lib/db/db-cli.ts");
// Exit explicitly: idle database sockets of the schema engine would keep Node alive for ~10 s.
process.exit(await runDbCommand(process.argv.slice(2)));
