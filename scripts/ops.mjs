#!/usr/bin/env node
// Operator CLI: `npm run --silent ops -- <command> [args]`, `npm run ops -- --help` (lib/ops/cli.ts).
// It runs compiled, from the process build of the current sources (scripts/build-processes.mjs:
// compiled first when there is none).
import { importProcessEntry } from "./build-processes.mjs";

const { runOpsCli } = await importProcessEntry("ops");
// Exit explicitly: idle database sockets would otherwise keep Node alive for seconds.
process.exit(await runOpsCli(process.argv.slice(2)));
