import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { OpsHelpShown, parseOpsArgv } from "./program";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");

function parse(...argv: string[]) {
  let out = "";
  let err = "";
  try {
    return { invocation: parseOpsArgv(argv, { out: (t) => void (out += t), err: (t) => void (err += t) }), out, err };
  } catch (error) {
    return { error: error as Error, out, err };
  }
}

describe("the ops command line", () => {
  it("lists every command in --help, and each command's options in its own --help", () => {
    const all = parse("--help");
    expect(all.error).toBeInstanceOf(OpsHelpShown);
    for (const name of ["seed", "account:create", "account:list", "user:create", "pool:assign", "job:show", "demo"]) expect(all.out).toContain(name);
    const one = parse("user:create", "--help");
    expect(one.error).toBeInstanceOf(OpsHelpShown);
    expect(one.out).toContain("--password-stdin");
    expect(one.out).not.toContain("--password <");
  });

  it("refuses a password on the command line", () => {
    const { error } = parse("user:create", "--email", "a@b.test", "--role", "staff", "--password", "correct horse battery");
    expect(error?.message).toMatch(/never taken on the command line/);
  });

  it("forwards a checked command as written, and says where user:create's password comes from", () => {
    expect(parse("account:create", "--name", "Clinic", "--plan", "standard").invocation).toEqual({ argv: ["account:create", "--name", "Clinic", "--plan", "standard"] });
    expect(parse("user:create", "--email", "a@b.test", "--role", "staff", "--password-stdin").invocation).toEqual({
      argv: ["user:create", "--email", "a@b.test", "--role", "staff"],
      password: "stdin",
    });
    expect(parse("user:create", "--email", "a@b.test", "--role", "staff").invocation?.password).toBe("prompt");
  });

  it("names a missing option, an unknown option and an unknown command", () => {
    expect(parse("account:create").error?.message).toMatch(/--name/);
    expect(parse("account:suspend").error?.message).toMatch(/missing required argument 'id'/);
    expect(parse("account:create", "--name", "x", "--colour", "red").error?.message).toMatch(/unknown option '--colour'/);
    expect(parse("acount:create").error?.message).toMatch(/unknown command 'acount:create'/);
  });

  it("answers --help at once through npm's entry point without opening a database", async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-ops-help-")), "data");
    const { stdout } = await run(process.execPath, [path.join(root, "scripts/ops.mjs"), "--help"], { cwd: root, env: { ...process.env, DATA_DIR: dataDir } });
    expect(stdout).toContain("user:create");
    // No database was opened (opening one creates DATA_DIR/db and migrates it): --help costs loading the compiled
    // CLI (scripts/build-processes.mjs), and its compilation when the sources changed since.
    expect(fs.existsSync(dataDir)).toBe(false);
    const refused = await run(process.execPath, [path.join(root, "scripts/ops.mjs"), "user:create", "--email", "a@b.test", "--role", "staff"], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir },
    }).catch((error: { stdout: string; code: number }) => error);
    expect("code" in refused ? refused.code : 0).toBe(1);
    expect(JSON.parse(refused.stdout.trim())).toEqual({ error: "no terminal to ask for the password on: pipe it in with --password-stdin" });
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});
