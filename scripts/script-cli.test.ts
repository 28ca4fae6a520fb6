import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseScriptArgs } from "./script-cli";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");

const options = {
  sizes: { type: "string", default: "1000,10000" },
  cache: { type: "string" },
  cascade: { type: "boolean", default: false },
  "no-build": { type: "boolean", default: false },
  "impostor-subjects": { type: "string" },
} as const;

describe("parseScriptArgs", () => {
  it("answers in node:util parseArgs' shape, under the long option names", () => {
    const parsed = parseScriptArgs({ name: "x", description: "x", args: "DIR", options, argv: ["set", "--impostor-subjects", "100", "--no-build", "--cascade"] });
    expect(parsed.positionals).toEqual(["set"]);
    expect(parsed.values).toEqual({ sizes: "1000,10000", cascade: true, "no-build": true, "impostor-subjects": "100" });
    const bare = parseScriptArgs({ name: "x", description: "x", options, argv: [] });
    expect(bare.values).toEqual({ sizes: "1000,10000", cascade: false, "no-build": false });
  });

  it("answers --help without running the script, and refuses an unknown option in one line", async () => {
    // openapi would write docs/openapi.json if --help were not answered first.
    const help = await run(process.execPath, ["--import", "tsx", path.join(root, "scripts/openapi.ts"), "--help"], { cwd: root });
    expect(help.stdout).toMatch(/Usage: npm run openapi/);
    expect(help.stdout).not.toContain("wrote docs/openapi.json");
    const wrong = await run(process.execPath, ["--import", "tsx", path.join(root, "lab/scripts/calibrate.ts"), "--colour", "red"], { cwd: root }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect("code" in wrong && wrong.code).toBe(1);
    expect(wrong.stderr.trim()).toBe("error: unknown option '--colour'");
  });
});
