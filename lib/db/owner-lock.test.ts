import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readEnv } from "@/lib/env";
import { acquireOwnerLock, isAlive, OwnerBusyError, readLiveOwner, releaseOwnerLock, updateOwnerLock } from "./owner-lock";

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

  it("takes a killed process that its parent has not reaped yet (a zombie) as dead", async () => {
    // `sleep 0.05` ends while its parent (`exec sleep 5`) never waits for it: it stays a zombie.
    const parent = spawn("sh", ["-c", "sleep 0.05 & echo $!; exec sleep 5"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once("data", (d) => resolve(String(d)))));
      const state = () => fs.readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1][0];
      for (let i = 0; i < 100 && state() !== "Z"; i++) await new Promise((r) => setTimeout(r, 20));
      expect(state()).toBe("Z");
      expect(() => process.kill(zombie, 0)).not.toThrow();
      expect(isAlive(zombie)).toBe(false);
      expect(isAlive(process.ppid)).toBe(true);
      const env = tempEnv();
      fs.writeFileSync(lockFile(env), JSON.stringify({ pid: zombie, role: "server", startedAt: "" }));
      acquireOwnerLock(env, "server");
      expect(JSON.parse(fs.readFileSync(lockFile(env), "utf8"))).toMatchObject({ pid: process.pid });
    } finally {
      parent.kill();
    }
  });

  it("takes over a lock left by a process that died", () => {
    const env = tempEnv();
    fs.writeFileSync(lockFile(env), JSON.stringify({ pid: 2 ** 22 + 12345, role: "server", startedAt: "" }));
    expect(readLiveOwner(env)).toBeNull();
    acquireOwnerLock(env, "cli");
    expect(JSON.parse(fs.readFileSync(lockFile(env), "utf8"))).toMatchObject({ pid: process.pid, role: "cli" });
  });
});
