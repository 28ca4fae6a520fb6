import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ENGINE_WORKER } from "./build-engine.mjs";
import { PROCESS_BUILD } from "./build-processes.mjs";
import { ensureBuild, holdSlot, liveHolders, planStart, sourceHash, WEB_BUILD } from "./build-slots.mjs";

// `npm start` builds only when no finished build matches the sources, and never into a slot a
// running server holds. A fake build writes a marker instead of running next build.

let root: string;
let builds: string[];

function fakeBuild(marker: string) {
  return async (slot: string) => {
    builds.push(slot);
    fs.mkdirSync(path.join(root, slot), { recursive: true });
    fs.writeFileSync(path.join(root, slot, "BUILD_ID"), marker);
    fs.mkdirSync(path.join(root, slot, path.dirname(ENGINE_WORKER)), { recursive: true });
    fs.writeFileSync(path.join(root, slot, ENGINE_WORKER), `// ${marker}`);
  };
}

function write(file: string, text: string) {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), text);
}

/** A process that lives until killed: stands for a server running from a slot. */
function otherProcess(): Promise<{ pid: number; kill(): Promise<void> }> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  return new Promise((resolve) =>
    child.once("spawn", () =>
      resolve({ pid: child.pid!, kill: () => new Promise<void>((r) => (child.once("exit", () => r()), child.kill("SIGKILL"))) }),
    ),
  );
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-build-slots-"));
  builds = [];
  write("app/page.tsx", "export default 1;");
  write("lib/a.ts", "export const a = 1;");
  write("package-lock.json", "{}");
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe("sourceHash", () => {
  it("changes with a source, the lockfile, a new file or the engine's compile recipe, not with tests, docs or other scripts", () => {
    const first = sourceHash(root);
    write("lib/a.test.ts", "test");
    write("docs/x.md", "doc");
    write("scripts/x.mjs", "script");
    write("e2e/x.spec.ts", "spec");
    expect(sourceHash(root)).toBe(first);
    // The engine's compile recipe is part of the build.
    write("scripts/build-engine.mjs", "recipe");
    const recipe = sourceHash(root);
    expect(recipe).not.toBe(first);
    write("scripts/build-engine.mjs", "recipe 2");
    const before = sourceHash(root);
    expect(before).not.toBe(recipe);
    write("lib/a.ts", "export const a = 2;");
    const second = sourceHash(root);
    expect(second).not.toBe(before);
    write("package-lock.json", '{"lockfileVersion":3}');
    const third = sourceHash(root);
    expect(third).not.toBe(second);
    write("components/new.tsx", "x");
    expect(sourceHash(root)).not.toBe(third);
  });
});

describe("ensureBuild", () => {
  it("builds once, then serves the same build without building", async () => {
    const first = await ensureBuild(root, fakeBuild("one"));
    first.release();
    const again = await ensureBuild(root, fakeBuild("two"));
    again.release();
    expect(builds).toEqual([first.slot]);
    expect(again.slot).toBe(first.slot);
    expect(fs.readFileSync(path.join(root, again.slot, "BUILD_ID"), "utf8")).toBe("one");
  });

  it("rebuilds stale sources into the other slot, leaving a running server's files untouched", async () => {
    const running = await ensureBuild(root, fakeBuild("old"));
    // `running` holds its slot for this (live) process, as a server does.
    write("lib/a.ts", "export const a = 3;");
    const next = await ensureBuild(root, fakeBuild("new"));
    expect(next.slot).not.toBe(running.slot);
    expect(fs.readFileSync(path.join(root, running.slot, "BUILD_ID"), "utf8")).toBe("old");
    expect(fs.readFileSync(path.join(root, next.slot, "BUILD_ID"), "utf8")).toBe("new");
    running.release();
    next.release();
  });

  it("refuses to build while both slots are served by running servers with other sources", async () => {
    const a = await ensureBuild(root, fakeBuild("a"));
    write("lib/a.ts", "export const a = 4;");
    const b = await ensureBuild(root, fakeBuild("b"));
    write("lib/a.ts", "export const a = 5;");
    await expect(ensureBuild(root, fakeBuild("c"))).rejects.toThrow(/used by a running process/);
    expect(builds).toEqual([a.slot, b.slot]);
    a.release();
    b.release();
  });

  it("treats a build whose compiled engine is missing as stale: builds again", async () => {
    const first = await ensureBuild(root, fakeBuild("one"));
    first.release();
    fs.rmSync(path.join(root, first.slot, ENGINE_WORKER));
    const again = await ensureBuild(root, fakeBuild("two"));
    again.release();
    expect(builds).toHaveLength(2);
    expect(fs.readFileSync(path.join(root, again.slot, ENGINE_WORKER), "utf8")).toBe("// two");
  });

  it("never serves a build that did not finish", async () => {
    await expect(
      ensureBuild(root, async (slot) => {
        fs.mkdirSync(path.join(root, slot), { recursive: true });
        throw new Error("build failed");
      }),
    ).rejects.toThrow("build failed");
    const retry = await ensureBuild(root, fakeBuild("ok"));
    retry.release();
    expect(builds).toHaveLength(1);
    expect(fs.readFileSync(path.join(root, retry.slot, "BUILD_ID"), "utf8")).toBe("ok");
  });
});

describe("slot holders", () => {
  it("counts a live server and forgets a dead one", async () => {
    const server = await otherProcess();
    holdSlot(root, ".next-a", server.pid);
    expect(liveHolders(root, ".next-a")).toEqual([server.pid]);
    await server.kill();
    expect(liveHolders(root, ".next-a")).toEqual([]);
  });

  it("rebuilds into a slot whose server has exited", async () => {
    const a = await ensureBuild(root, fakeBuild("a"));
    a.release();
    write("lib/a.ts", "export const a = 6;");
    const b = await ensureBuild(root, fakeBuild("b"));
    b.release();
    write("lib/a.ts", "export const a = 7;");
    expect(planStart(root, sourceHash(root))).toEqual({ action: "build", slot: a.slot });
  });
});

describe("kinds of build", () => {
  /** A fake process build: every entry the kind names, no compiler. */
  async function fakeProcessBuild(slot: string) {
    builds.push(slot);
    for (const part of PROCESS_BUILD.parts) write(path.join(slot, part), "// compiled");
  }

  it("keeps the process entries' build in its own slots, stale only when what it reads changes", async () => {
    const web = await ensureBuild(root, fakeBuild("web"));
    const processes = await ensureBuild(root, fakeProcessBuild, () => {}, PROCESS_BUILD);
    expect(PROCESS_BUILD.slots).toContain(processes.slot);
    expect(WEB_BUILD.slots).toContain(web.slot);
    // A page is no part of the process entries; lab/ (ops demo's generator) is no part of the web build.
    write("app/page.tsx", "export default 2;");
    expect(planStart(root, sourceHash(root, PROCESS_BUILD), PROCESS_BUILD)).toEqual({ action: "serve", slot: processes.slot });
    write("lab/synth/x.ts", "export const x = 1;");
    expect(planStart(root, sourceHash(root, PROCESS_BUILD), PROCESS_BUILD)).toEqual({ action: "build", slot: PROCESS_BUILD.slots.find((s) => s !== processes.slot) });
    write("app/page.tsx", "export default 1;");
    expect(planStart(root, sourceHash(root), WEB_BUILD)).toEqual({ action: "serve", slot: web.slot });
    web.release();
    processes.release();
  });
});
