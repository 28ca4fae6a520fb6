// The builds that processes run from, of two kinds with the same rules. The web build `npm start` serves
// (scripts/start.mjs: next build and the engine's worker, WEB_BUILD), and the compiled process entries
// `npm run worker`, `ops` and `db:migrate` run (scripts/build-processes.mjs, PROCESS_BUILD). A build lives
// in one of its kind's two slot folders and is stamped, when every part of it has been written, with a
// hash of everything it reads. A process runs the slot whose stamp matches the sources at once, and
// otherwise a build goes into a slot no live process holds: a build never replaces the files of a
// running process. `npm run build` and the test suites keep building the web build into `.next`,
// which `npm start` never uses.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ENGINE_WORKER } from "./build-engine.mjs";

const STAMP = "rhinarium-build.json";
const HOLDERS = "rhinarium-servers";

/**
 * `npm start`'s build: Next's distDir (chosen by NEXT_DIST_DIR in next.config.ts) with the engine's
 * worker compiled into it. What it reads: the app's sources (not their tests), the data files they
 * import, and the root files below. Anything else (docs, other scripts, e2e, data) does not change it.
 */
export const WEB_BUILD = {
  slots: [".next-a", ".next-b"],
  lock: ".next-build.lock",
  sources: ["app", "components", "lib", "public", "prisma"],
  parts: [ENGINE_WORKER],
};

// The configuration, the lockfile and the compile recipes: every kind of build reads them.
const ROOT_FILES = [
  "package.json",
  "package-lock.json",
  "next.config.ts",
  "tsconfig.json",
  "postcss.config.mjs",
  "proxy.ts",
  "instrumentation.ts",
  "docs/openapi.json",
  "scripts/build-engine.mjs",
  "scripts/build-processes.mjs",
];
const SKIPPED = /(\.test\.tsx?|\.spec\.tsx?|\.tsbuildinfo)$/;

function listFiles(root, dir, out) {
  let entries;
  try {
    entries = fs.readdirSync(path.join(root, dir), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) listFiles(root, rel, out);
    else if (entry.isFile() && !SKIPPED.test(entry.name)) out.push(rel);
  }
}

/** sha256 over the names and contents of every file a build of this kind reads, and Node's version. */
export function sourceHash(root, kind = WEB_BUILD) {
  const files = [];
  for (const dir of kind.sources) listFiles(root, dir, files);
  for (const file of ROOT_FILES) if (fs.existsSync(path.join(root, file))) files.push(file);
  files.sort();
  const hash = createHash("sha256").update(`node ${process.version}\n`);
  for (const file of files) {
    hash.update(`${file}\n`);
    hash.update(fs.readFileSync(path.join(root, file)));
    hash.update("\n");
  }
  return hash.digest("hex");
}

function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

export function readStamp(root, slot) {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, slot, STAMP), "utf8"));
  } catch {
    return null;
  }
}

/** The live servers that serve this slot (dead holders' files are removed on the way). */
export function liveHolders(root, slot) {
  const dir = path.join(root, slot, HOLDERS);
  let names = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const live = [];
  for (const name of names) {
    const pid = Number(name);
    if (isAlive(pid)) live.push(pid);
    else fs.rmSync(path.join(dir, name), { force: true });
  }
  return live;
}

/** Marks `slot` as served by `pid` until that process ends. */
export function holdSlot(root, slot, pid = process.pid) {
  const dir = path.join(root, slot, HOLDERS);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, String(pid)), "");
  return () => fs.rmSync(path.join(dir, String(pid)), { force: true });
}

/**
 * What a process should do for these sources: run a slot whose finished build matches, or build
 * into a slot that no live process holds (an unused one first, else the older one), or refuse.
 */
export function planStart(root, hash, kind = WEB_BUILD) {
  const slots = kind.slots.map((slot) => ({ slot, stamp: readStamp(root, slot), held: liveHolders(root, slot).length > 0 }));
  // A build that misses a part (the compiled engine, an entry) is not finished: it is rebuilt, as a stale one is.
  const current = slots.find((s) => s.stamp?.hash === hash && kind.parts.every((part) => fs.existsSync(path.join(root, s.slot, part))));
  if (current) return { action: "serve", slot: current.slot };
  const free = slots.filter((s) => !s.held);
  if (free.length === 0) {
    return { action: "refuse", reason: `every build slot (${kind.slots.join(", ")}) is used by a running process of other sources; stop one first` };
  }
  free.sort((a, b) => (a.stamp?.builtAt ?? "").localeCompare(b.stamp?.builtAt ?? ""));
  return { action: "build", slot: free[0].slot };
}

/** One build of a kind at a time in a checkout: an exclusive lock file holding the builder's pid. */
export async function withBuildLock(root, fn, { waitMs = 15 * 60_000, kind = WEB_BUILD } = {}) {
  const lock = path.join(root, kind.lock);
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: "wx" });
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      const holder = Number(fs.readFileSync(lock, "utf8"));
      if (!isAlive(holder)) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another build (pid ${holder}) is still running`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/**
 * The slot to run, built first when needed (`log` says so), and held for this process. `build(slot)` writes every part
 * of the kind's build into that slot (for the web build: next build, then the engine); the stamp is
 * written only after it succeeds, so a failed or interrupted build is never run.
 */
export async function ensureBuild(root, build, log = () => {}, kind = WEB_BUILD) {
  return withBuildLock(root, async () => {
    const hash = sourceHash(root, kind);
    const plan = planStart(root, hash, kind);
    if (plan.action === "refuse") throw new Error(plan.reason);
    const built = plan.action === "build";
    if (built) {
      log(`no current build of these sources: building into ${plan.slot}`);
      const dir = path.join(root, plan.slot);
      fs.rmSync(dir, { recursive: true, force: true });
      await build(plan.slot);
      fs.writeFileSync(path.join(dir, STAMP), JSON.stringify({ hash, builtAt: new Date().toISOString() }));
    }
    // Held before the lock is released, so no other start can pick this slot to rebuild.
    return { slot: plan.slot, built, release: holdSlot(root, plan.slot) };
  }, { kind });
}
