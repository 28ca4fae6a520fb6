// The production builds `npm start` serves (scripts/start.mjs). A build lives in one of two slot
// folders (.next-a, .next-b: Next's distDir, chosen by NEXT_DIST_DIR in next.config.ts) and is
// stamped, when `next build` and the engine's compilation (scripts/build-engine.mjs, into the slot's
// engine/) have finished, with a hash of everything the build reads. `npm start`
// serves the slot whose stamp matches the sources at once, and otherwise builds into a slot no live
// server holds: a build never replaces the files of a running server. `npm run build` and the
// test suites keep building into `.next`, which `npm start` never uses.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ENGINE_WORKER } from "./build-engine.mjs";

export const SLOTS = [".next-a", ".next-b"];
const STAMP = "rhinarium-build.json";
const HOLDERS = "rhinarium-servers";
const LOCK = ".next-build.lock";

// What a production build reads: the app's sources (not its tests), the data files it imports,
// the configuration, the lockfile. Anything else (docs, scripts, e2e, data) does not change it.
const SOURCE_DIRS = ["app", "components", "lib", "public", "prisma"];
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

/** sha256 over the names and contents of every file the build reads, and Node's version. */
export function sourceHash(root) {
  const files = [];
  for (const dir of SOURCE_DIRS) listFiles(root, dir, files);
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
 * What `npm start` should do for these sources: serve a slot whose finished build matches, or build
 * into a slot that no live server holds (an unused one first, else the older one), or refuse.
 */
export function planStart(root, hash) {
  const slots = SLOTS.map((slot) => ({ slot, stamp: readStamp(root, slot), held: liveHolders(root, slot).length > 0 }));
  // A build without its compiled engine is not a finished build: it is rebuilt, as a stale one is.
  const current = slots.find((s) => s.stamp?.hash === hash && fs.existsSync(path.join(root, s.slot, ENGINE_WORKER)));
  if (current) return { action: "serve", slot: current.slot };
  const free = slots.filter((s) => !s.held);
  if (free.length === 0) {
    return { action: "refuse", reason: `every build slot (${SLOTS.join(", ")}) is served by a running server with other sources; stop one first` };
  }
  free.sort((a, b) => (a.stamp?.builtAt ?? "").localeCompare(b.stamp?.builtAt ?? ""));
  return { action: "build", slot: free[0].slot };
}

/** One build at a time in a checkout: an exclusive lock file holding the builder's pid. */
export async function withBuildLock(root, fn, { waitMs = 15 * 60_000 } = {}) {
  const lock = path.join(root, LOCK);
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
 * The slot to serve, built first when needed, and held for this process. `build(slot)` runs `next build` and compiles
 * the engine into that slot; the
 * stamp is written only after it succeeds, so a failed or interrupted build is never served.
 */
export async function ensureBuild(root, build, log = () => {}) {
  return withBuildLock(root, async () => {
    const hash = sourceHash(root);
    const plan = planStart(root, hash);
    if (plan.action === "refuse") throw new Error(plan.reason);
    if (plan.action === "serve") {
      log(`serving the existing build in ${plan.slot}`);
    } else {
      log(`no current build of these sources: building into ${plan.slot}`);
      const dir = path.join(root, plan.slot);
      fs.rmSync(dir, { recursive: true, force: true });
      await build(plan.slot);
      fs.writeFileSync(path.join(dir, STAMP), JSON.stringify({ hash, builtAt: new Date().toISOString() }));
    }
    // Held before the lock is released, so no other start can pick this slot to rebuild.
    return { slot: plan.slot, release: holdSlot(root, plan.slot) };
  });
}
