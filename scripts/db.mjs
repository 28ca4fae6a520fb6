#!/usr/bin/env node
// `npm run db:migrate` — apply migrations to the configured database (PGlite in DATA_DIR, or
// DATABASE_URL), in-process with the WASM schema engine.
// `npm run db:migrate -- create NAME` — write a new migration from prisma/schema.prisma.
// It runs compiled, from the process build of the current sources (scripts/build-processes.mjs:
// compiled first when there is none).
import { importProcessEntry } from "./build-processes.mjs";

const { runDbCommand } = await importProcessEntry("db");
// Exit explicitly: idle database sockets of the schema engine would keep Node alive for ~10 s.
process.exit(await runDbCommand(process.argv.slice(2)));
