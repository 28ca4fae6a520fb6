import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readEnv } from "@/lib/env";
import { acquireOwnerLock, OwnerBusyError, readLiveOwner, releaseOwnerLock, updateOwnerLock } from "./owner-lock";

const dirs: string[] = [];
function tempEnv() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-lock-"));
  dirs.push(dir);
  return readEnv({ DATA_DIR: dir } as unknown as NodeJS.ProcessEnv);
}
const lockFile = (env: ReturnType<typeof tempEnv>) => path.join(env.dataDir, "db.owner.json");

afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("database owner lock", () => {
  it("is taken, annotated with the ops port, and released by its owner", () => {
    const env = tempEnv();
    acquireOwnerLock(env, "server");
    updateOwnerLock(env, { opsPort: 4242 });
    expect(JSON.parse(fs.readFileSync(lockFile(env), "utf8"))).toMatchObject({ pid: process.pid, role: "server", opsPort: 4242 });
    releaseOwnerLock(env);
    expect(fs.existsSync(lockFile(env))).toBe(false);
  });

  it("refuses a second owner while the first process lives", () => {
    const env = tempEnv();
    // The parent process is certainly alive: pretend it owns the database.
    fs.writeFileSync(lockFile(env), JSON.stringify({ pid: process.ppid, role: "server", opsPort: 1, startedAt: "" }));
    expect(readLiveOwner(env)).toMatchObject({ pid: process.ppid, role: "server" });
    expect(() => acquireOwnerLock(env, "cli")).toThrow(OwnerBusyError);
    releaseOwnerLock(env); // not ours: left alone
    expect(fs.existsSync(lockFile(env))).toBe(true);
  });

  it("takes over a lock left by a process that died", () => {
    const env = tempEnv();
    fs.writeFileSync(lockFile(env), JSON.stringify({ pid: 2 ** 22 + 12345, role: "server", startedAt: "" }));
    expect(readLiveOwner(env)).toBeNull();
    acquireOwnerLock(env, "cli");
    expect(JSON.parse(fs.readFileSync(lockFile(env), "utf8"))).toMatchObject({ pid: process.pid, role: "cli" });
  });
});
