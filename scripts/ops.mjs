#!/usr/bin/env node
// Operator CLI: `npm run --silent ops -- <command> [args]`, `npm run ops -- --help` (lib/ops/cli.ts).
import { register } from "tsx/esm/api";

register();
const { runOpsCli } = await import("../lib/ops/cli.ts");
// Exit explicitly: idle database sockets would otherwise keep Node alive for seconds.
process.exit(await runOpsCli(process.argv.slice(2)));
