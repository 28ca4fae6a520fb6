import path from "node:path";
import { Command, CommanderError, Option } from "commander";
import { USER_ROLES } from "@/lib/accounts/users";

/**
 * The operator CLI's commands, arguments and options (commander), for `--help` and for checking a
 * command line before anything opens a database. What each command does is in commands.ts; where
 * it runs, in cli.ts. The checked argv is forwarded as it was written, so commands.ts parses it.
 */

export interface OpsInvocation {
  /** The argv commands.ts receives (the password, when there is one, added as --password). */
  argv: string[];
  /** user:create: where its password comes from. */
  password?: "stdin" | "prompt";
  /** restore: runs in the CLI's process, before any database is opened (lib/ops/backup.ts). */
  restore?: string;
  /** demo: runs in the CLI's process, against the server's API (lib/ops/demo.ts). */
  demo?: { accountId: string; pets: number; url: string };
}

const ROLES = USER_ROLES.join("|");

function describe(program: Command): void {
  program
    .command("seed")
    .description("create the default plans (demo, basic, standard) when missing; list the plans");
  program
    .command("plan:upsert")
    .description("create or change a plan")
    .argument("<name>", "plan name")
    .requiredOption("--pet-limit <n|unlimited>", "most pets an account on this plan may hold")
    .requiredOption("--identification <yes|no>", "whether the plan allows 1:N identification");
  program
    .command("account:create")
    .description("create a clinic account and its first API key (printed once)")
    .requiredOption("--name <name>", "account name")
    .option("--plan <plan|none>", "plan (default: none, no pet limit, no identification)");
  program.command("account:list").description("list the accounts with their plan, pets and users");
  program
    .command("account:plan")
    .description("change an account's plan")
    .argument("<id>", "account id")
    .argument("<plan|none>", "plan name, or none");
  program.command("account:suspend").description("suspend an account: every API call answers 403 10010").argument("<id>", "account id");
  program.command("account:reinstate").description("reinstate a suspended account").argument("<id>", "account id");
  program
    .command("key:issue")
    .description("issue one more API key for an account (printed once); its other keys keep working")
    .argument("<id>", "account id")
    .option("--name <name>", "what the key is for, shown in the dashboard")
    .option("--expires <iso-date>", "when the key stops working (401 10000 afterwards); default: never");
  program.command("key:reissue").description("issue a new API key; every older key of the account stops working").argument("<id>", "account id");
  program.command("key:deactivate").description("deactivate every API key of an account").argument("<id>", "account id");
  program
    .command("pool:create")
    .description("create a search pool (or add pets to one)")
    .requiredOption("--account <id>", "account id")
    .requiredOption("--name <name>", "pool name")
    .option("--pets <id,id,...>", "pets to move into the pool");
  program
    .command("pool:assign")
    .description("choose the pool identification searches")
    .requiredOption("--account <id>", "account id")
    .requiredOption("--pool <name|default>", "pool name, or default (all the account's pets)");
  program
    .command("pool:delete")
    .description("delete a search pool (its pets return to the default pool)")
    .requiredOption("--account <id>", "account id")
    .requiredOption("--name <name>", "pool name");
  program
    .command("user:create")
    .description("create a dashboard user; the password is prompted for (twice), or read from stdin with --password-stdin")
    .requiredOption("--email <email>", "e-mail address (the sign-in name)")
    .requiredOption("--role <role>", ROLES)
    .option("--account <id>", "account id (every role but admin)")
    .option("--password-stdin", "read the password from standard input (for scripts)")
    .addOption(new Option("--password <password>").hideHelp());
  program.command("usage").description("API calls of an account by route and status").argument("<id>", "account id");
  program.command("job:show").description("a job's internal view, with the failure reason the API never returns").argument("<jobId>", "job id");
  program
    .command("backup")
    .description("copy the embedded database (a consistent dump, while the server keeps serving) and its images into a new folder")
    .argument("<dir>", "a new or empty folder");
  program
    .command("restore")
    .description("restore a backup into DATA_DIR, which must hold no database (no server running); newer migrations are then applied")
    .argument("<dir>", "a folder written by ops backup");
  program
    .command("demo")
    .description("fill an account with synthetic pets, enrolled prints, finished and failed jobs, through the API of a running server (a few minutes)")
    .requiredOption("--account <id>", "account id (it gets an API key of its own for this)")
    .option("--pets <n>", "how many pets to register", "6")
    .option("--url <url>", "the running server", `http://127.0.0.1:${process.env.PORT || 3000}`);
}

export class OpsHelpShown extends Error {}

/**
 * Checks argv against the commands above. Answers the invocation, or throws CommanderError with a
 * message for the operator (exit code 2), or OpsHelpShown once help was printed (exit code 0).
 */
export function parseOpsArgv(argv: string[], write: { out(text: string): void; err(text: string): void }): OpsInvocation {
  const program = new Command("ops")
    .usage("<command> [options]   (npm run --silent ops -- <command> ...)")
    .description(
      "Rhinarium's operator commands. The last line of stdout is one JSON object ({\"error\": ...} and a non-zero exit code on failure).",
    )
    .configureOutput({ writeOut: write.out, writeErr: write.err, outputError: () => {} })
    .exitOverride()
    .showSuggestionAfterError(true);
  describe(program);
  let invocation: OpsInvocation | undefined;
  for (const command of program.commands) {
    command.exitOverride().configureOutput({ writeOut: write.out, writeErr: write.err, outputError: () => {} });
    command.action((...args: unknown[]) => {
      const options = (args.at(-2) ?? {}) as { password?: string; passwordStdin?: boolean; account?: string; pets?: string; url?: string };
      if (options.password !== undefined) {
        throw new CommanderError(2, "ops.password", "passwords are never taken on the command line: leave --password out to be asked, or pipe it with --password-stdin");
      }
      const forwarded = argv.filter((a) => a !== "--password-stdin");
      if (command.name() === "demo") {
        const pets = Number(options.pets);
        if (!Number.isInteger(pets) || pets < 1 || pets > 100) throw new CommanderError(2, "ops.pets", "--pets must be a whole number from 1 to 100");
        invocation = { argv: forwarded, demo: { accountId: options.account!, pets, url: options.url! } };
        return;
      }
      // The folder as the operator means it (relative to here), whichever process writes it.
      if (command.name() === "backup") {
        invocation = { argv: ["backup", path.resolve(String(args[0]))] };
        return;
      }
      if (command.name() === "restore") {
        invocation = { argv: forwarded, restore: path.resolve(String(args[0])) };
        return;
      }
      invocation = command.name() === "user:create" ? { argv: forwarded, password: options.passwordStdin ? "stdin" : "prompt" } : { argv: forwarded };
    });
  }
  if (argv.length === 0) {
    write.err(program.helpInformation());
    throw new CommanderError(2, "ops.noCommand", "no command given (see npm run ops -- --help)");
  }
  try {
    program.parse(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError && (error.code === "commander.helpDisplayed" || error.code === "commander.help" || error.code === "commander.version")) {
      throw new OpsHelpShown();
    }
    throw error;
  }
  if (!invocation) throw new CommanderError(2, "ops.unknownCommand", `unknown command ${argv[0]} (see npm run ops -- --help)`);
  return invocation;
}
