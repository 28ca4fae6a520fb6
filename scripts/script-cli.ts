import { Command, Option } from "commander";
import type { parseArgs as nodeParseArgs, ParseArgsConfig } from "node:util";

/**
 * The development scripts' command lines, on commander: `--help` lists the script's options with
 * their defaults, and a mistake prints one line and exits 1 instead of a stack trace. It answers in
 * the shape of node:util's parseArgs ({ values, positionals }, values under the long option names),
 * so the scripts read their options as they always did.
 */
type ScriptOption = NonNullable<ParseArgsConfig["options"]>[string] & { description?: string };

export interface ScriptCliConfig {
  /** `npm run NAME`, shown in the usage line. */
  name: string;
  /** What the script does, and what its positional arguments are. */
  description: string;
  /** The positional arguments in the usage line, e.g. "DIR [DIR...]". */
  args?: string;
  options: Record<string, ScriptOption>;
  argv?: string[];
}

export function parseScriptArgs<T extends Record<string, ScriptOption>>(
  config: ScriptCliConfig & { options: T },
): ReturnType<typeof nodeParseArgs<{ options: T; allowPositionals: true }>> {
  const program = new Command(`npm run ${config.name} --`).description(config.description).allowExcessArguments(Boolean(config.args));
  const attributes = new Map<string, { attribute: string; negated: boolean }>();
  for (const [long, spec] of Object.entries(config.options)) {
    const negated = long.startsWith("no-") && spec.type === "boolean";
    const flags = `${spec.short ? `-${spec.short}, ` : ""}--${long}${spec.type === "string" ? " <value>" : ""}`;
    const option = new Option(flags, spec.description ?? "");
    if (spec.multiple) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    // A boolean default of false is the absence of the flag; commander would print it as a default.
    if (spec.default !== undefined && !negated && spec.default !== false) option.default(spec.default);
    program.addOption(option);
    attributes.set(long, { attribute: option.attributeName(), negated });
  }
  if (config.args) program.usage(`[options] ${config.args}`).argument("[args...]");
  program.parse(config.argv ?? process.argv.slice(2), { from: "user" });
  const parsed = program.opts();
  const values: Record<string, unknown> = {};
  for (const [long, { attribute, negated }] of attributes) {
    const value = negated ? !parsed[attribute] : parsed[attribute];
    if (value !== undefined) values[long] = value;
    else if (config.options[long].type === "boolean" && config.options[long].default !== undefined) values[long] = config.options[long].default;
  }
  return { values, positionals: program.args, tokens: undefined } as unknown as ReturnType<typeof nodeParseArgs<{ options: T; allowPositionals: true }>>;
}
