// CLI: npm run synth -- --out DIR --subjects N --captures M [--seed S] [--difficulty normal|hard|real]
//                       [--backdrop plain|textured|shared-periodic|shared-textured] [--framing tight|loose]
//                       [--roll upright|any]
//                       [--workers W]
//      npm run synth -- stats DIR [--limit N] [--workers W]   (the set's statistics beside real crops')
import { availableParallelism } from "node:os";
import { BACKDROP_KINDS, type BackdropKind } from "../synth/backdrop";
import { formatSummary, measureCrops, summarise } from "../synth/crop-stats";
import { startProgress } from "@/lib/progress";
import { parseScriptArgs } from "@/scripts/script-cli";
import { FRAMINGS, ROLLS, type Framing, type Roll } from "../synth/capture";
import { generateDataset } from "../synth/dataset";
import type { DifficultyName } from "../synth/parameters";

class UsageError extends Error {}

interface CliArgs {
  out: string;
  subjects: number;
  captures: number;
  seed: number;
  difficulty: DifficultyName;
  backdrop?: BackdropKind;
  framing?: Framing;
  roll?: Roll;
  workers: number;
}

function parseInteger(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a non-negative integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function parseArgs(argv: string[]): CliArgs {
  const parsed = parseScriptArgs({
    name: "synth",
    description: "Renders a labelled set of synthetic nose crops (DIR/<subject>/<capture>.jpg and a manifest); `npm run synth -- stats DIR` prints a set's statistics beside real crops'.",
    options: {
      out: { type: "string", description: "the set's folder" },
      subjects: { type: "string", description: "how many animals" },
      captures: { type: "string", description: "captures of each animal" },
      seed: { type: "string", default: "1", description: "the set's seed" },
      difficulty: { type: "string", default: "hard", description: "normal, hard or real" },
      backdrop: { type: "string", description: `${BACKDROP_KINDS.join(", ")} (real only)` },
      framing: { type: "string", description: `${FRAMINGS.join(" or ")} (real only)` },
      roll: { type: "string", description: `${ROLLS.join(" or ")} (real only)` },
      workers: { type: "string", default: String(Math.min(2, availableParallelism())), description: "rendering threads" },
    },
    argv,
  }).values;
  const values = new Map(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  const required = (name: string) => {
    const v = values.get(name);
    if (v === undefined) throw new UsageError(`--${name} is required`);
    return v;
  };
  const difficulty = values.get("difficulty")!;
  if (difficulty !== "normal" && difficulty !== "hard" && difficulty !== "real") {
    throw new UsageError(`--difficulty must be "normal", "hard" or "real", got "${difficulty}"`);
  }
  const backdrop = values.get("backdrop");
  if (backdrop !== undefined && !(BACKDROP_KINDS as readonly string[]).includes(backdrop)) {
    throw new UsageError(`--backdrop must be one of ${BACKDROP_KINDS.join(", ")}, got "${backdrop}"`);
  }
  if (backdrop !== undefined && difficulty !== "real") throw new UsageError("--backdrop needs --difficulty real");
  const framing = values.get("framing");
  if (framing !== undefined && !(FRAMINGS as readonly string[]).includes(framing)) {
    throw new UsageError(`--framing must be one of ${FRAMINGS.join(", ")}, got "${framing}"`);
  }
  if (framing !== undefined && difficulty !== "real") throw new UsageError("--framing needs --difficulty real");
  const roll = values.get("roll");
  if (roll !== undefined && !(ROLLS as readonly string[]).includes(roll)) {
    throw new UsageError(`--roll must be one of ${ROLLS.join(", ")}, got "${roll}"`);
  }
  if (roll !== undefined && difficulty !== "real") throw new UsageError("--roll needs --difficulty real");
  const out = required("out");
  if (out.trim() === "") throw new UsageError("--out must not be empty");
  return {
    out,
    subjects: parseInteger("subjects", required("subjects"), 1, 10_000_000),
    captures: parseInteger("captures", required("captures"), 1, 1000),
    seed: parseInteger("seed", values.get("seed")!, 0, 0xffffffff),
    difficulty,
    ...(backdrop ? { backdrop: backdrop as BackdropKind } : {}),
    ...(framing === "loose" ? { framing: "loose" as const } : {}),
    ...(roll === "any" ? { roll: "any" as const } : {}),
    workers: parseInteger("workers", values.get("workers")!, 1, 64),
  };
}

interface StatsArgs {
  dir: string;
  limit: number;
  workers: number;
}

function parseStatsArgs(argv: string[]): StatsArgs {
  const { positionals, values } = parseScriptArgs({
    name: "synth -- stats",
    description: "Prints a set's crop statistics beside the real crops' of REAL-DATA.md.",
    args: "DIR",
    options: {
      limit: { type: "string", default: "0", description: "measure at most this many crops (0: all)" },
      workers: { type: "string", default: String(Math.min(2, availableParallelism())), description: "measuring threads" },
    },
    argv,
  });
  const dir = positionals[0];
  if (!dir) throw new UsageError("stats needs a directory");
  return { dir, limit: parseInteger("limit", values.limit!, 0, 10_000_000), workers: parseInteger("workers", values.workers!, 1, 64) };
}

async function stats(argv: string[]): Promise<void> {
  const args = parseStatsArgs(argv);
  const records = await measureCrops(args.dir, { workers: args.workers, limit: args.limit });
  if (records.length === 0) throw new Error(`no .jpg/.jpeg/.png crops under ${args.dir}`);
  console.log(formatSummary(summarise(records), records.length));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "stats") {
    try {
      await stats(argv.slice(1));
    } catch (error) {
      if (error instanceof UsageError) {
        console.error(`synth: ${error.message} (npm run synth -- stats --help)`);
        process.exit(2);
      }
      throw error;
    }
    return;
  }
  let args: CliArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`synth: ${error.message} (npm run synth -- --help)`);
      process.exit(2);
    }
    throw error;
  }
  const started = performance.now();
  const progress = startProgress("synth", args.subjects);
  const manifest = await generateDataset({ ...args, onSubjectDone: () => progress.tick() });
  progress.stop();
  const seconds = (performance.now() - started) / 1000;
  const images = manifest.subjects * manifest.captures;
  const framed = `${manifest.framing === "loose" ? ", loose framing" : ""}${manifest.roll === "any" ? ", any roll" : ""}`;
  const setting = manifest.backdrop ? `${manifest.difficulty} (${manifest.backdrop} backdrop${framed})` : manifest.difficulty;
  console.log(
    `synth: wrote ${images} ${setting} captures (${manifest.subjects} subjects × ${manifest.captures}) ` +
      `to ${args.out} in ${seconds.toFixed(1)} s (${((seconds * 1000) / images).toFixed(1)} ms/image wall, ` +
      `${args.workers} worker${args.workers > 1 ? "s" : ""}), seed ${manifest.seed}`,
  );
}

main().catch((error: unknown) => {
  console.error(`synth: failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
