import fs from "node:fs";
import path from "node:path";
import type { Env } from "@/lib/env";

// PGlite has no file lock, and two processes opening one data folder corrupt it. This file names the
// one process that owns the embedded database (the server or, while no server runs, the ops CLI or
// `npm run db:migrate`). It also tells the ops CLI where the owning server's loopback ops port is.

export interface OwnerInfo {
  pid: number;
  role: "server" | "cli";
  opsPort?: number;
  startedAt: string;
}

export class OwnerBusyError extends Error {
  constructor(readonly owner: OwnerInfo) {
    super(`the database in this DATA_DIR is owned by ${owner.role} process ${owner.pid}`);
  }
}

function lockPath(env: Env) {
  return path.join(env.dataDir, "db.owner.json");
}

/**
 * Whether a process runs. A process killed a moment ago stays a zombie until its parent reaps it:
 * signal 0 still reaches it, so on Linux its state in /proc decides.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // "pid (comm) S ...": the state follows the last ")" (comm may hold spaces and parentheses).
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return true; // no /proc (not Linux): signal 0 is all there is
  }
}

/** The live owner, or null when nobody (or only a crashed process) holds the database. */
export function readLiveOwner(env: Env): OwnerInfo | null {
  try {
    const owner = JSON.parse(fs.readFileSync(lockPath(env), "utf8")) as OwnerInfo;
    return owner.pid !== process.pid && isAlive(owner.pid) ? owner : null;
  } catch {
    return null;
  }
}

export function acquireOwnerLock(env: Env, role: OwnerInfo["role"]): void {
  fs.mkdirSync(env.dataDir, { recursive: true });
  const info: OwnerInfo = { pid: process.pid, role, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath(env), JSON.stringify(info), { flag: "wx", mode: 0o600 });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = readLiveOwner(env);
      if (owner) throw new OwnerBusyError(owner);
      // Left behind by a process that died (or by this one): take it over.
      fs.rmSync(lockPath(env), { force: true });
    }
  }
  throw new Error("could not take the database owner lock");
}

export function updateOwnerLock(env: Env, patch: Partial<OwnerInfo>): void {
  const current = JSON.parse(fs.readFileSync(lockPath(env), "utf8")) as OwnerInfo;
  fs.writeFileSync(lockPath(env), JSON.stringify({ ...current, ...patch }), { mode: 0o600 });
}

export function releaseOwnerLock(env: Env): void {
  try {
    const owner = JSON.parse(fs.readFileSync(lockPath(env), "utf8")) as OwnerInfo;
    if (owner.pid === process.pid) fs.rmSync(lockPath(env), { force: true });
  } catch {
    // Already gone.
  }
}
