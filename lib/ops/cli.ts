import { CommanderError } from "commander";
import { OpsHelpShown, parseOpsArgv } from "./program";

/**
 * `npm run --silent ops -- <command>`: the command line is checked (and `--help` answered) before
 * anything heavier is loaded or any database is opened; then dispatch.ts runs the command where it
 * must run. The last line of stdout is always one JSON object; the exit code is 0 on success, 2 for
 * a usage error, 1 for a failure.
 */
export async function runOpsCli(argv: string[]): Promise<number> {
  const fail = (message: string, code: number) => {
    console.log(JSON.stringify({ error: message }));
    return code;
  };
  let invocation;
  try {
    invocation = parseOpsArgv(argv, { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
  } catch (error) {
    if (error instanceof OpsHelpShown) return 0;
    if (error instanceof CommanderError) return fail(error.message.replace(/^error: /, ""), 2);
    throw error;
  }
  try {
    const forwarded = [...invocation.argv];
    if (invocation.password) {
      const input = await import("./password-input");
      const password = invocation.password === "stdin" ? await input.readPasswordFromStdin() : await input.promptNewPassword();
      forwarded.push("--password", password);
    }
    const [{ runSomewhere }, { readEnv }] = await Promise.all([import("./dispatch"), import("@/lib/env")]);
    if (invocation.restore) {
      const { restoreBackup } = await import("./backup");
      console.log(JSON.stringify(await restoreBackup(readEnv(), invocation.restore)));
      return 0;
    }
    if (invocation.demo) {
      const { accountId, pets, url } = invocation.demo;
      const { apiKey } = (await runSomewhere(readEnv(), ["key:issue", accountId])) as { apiKey: string };
      const { fillDemo } = await import("./demo");
      console.log(JSON.stringify({ accountId, apiKey, ...(await fillDemo({ baseUrl: url, apiKey, pets })) }));
      return 0;
    }
    console.log(JSON.stringify(await runSomewhere(readEnv(), forwarded)));
    return 0;
  } catch (error) {
    const { OpsUsageError } = await import("./commands");
    return fail(error instanceof Error ? error.message : String(error), error instanceof OpsUsageError ? 2 : 1);
  }
}
