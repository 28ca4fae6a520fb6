import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { flatJpeg } from "@/lab/test-support/nose-images";
import { EnginePool, EngineTaskError, workerEntryPath } from "./engine-pool";
import { ENGINE_THREAD_NICE, engineThreadNice } from "./worker";

const pool = new EnginePool(1);
afterAll(() => pool.shutdown());

describe("engine worker pool", () => {
  it("queues a burst larger than the pool and runs every task, one at a time per worker", async () => {
    const jpeg = new Uint8Array(await flatJpeg(200, 200));
    const burst = Array.from({ length: 12 }, () => pool.run("analyseImage", jpeg));
    expect(pool.queued).toBe(11);
    const results = await Promise.all(burst);
    // A flat image is refused as blank: the same typed answer for every task of the burst.
    expect(results[0]).toMatchObject({ ok: false, rejection: { code: "BLANK" } });
    for (const result of results) expect(result).toEqual(results[0]);
    expect(pool.queued).toBe(0);
  });

  it("runs its workers at a lower priority than the main thread (Linux: nice per thread)", async () => {
    await pool.run("analyseImage", new Uint8Array(await flatJpeg(64, 64)));
    // Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value ("pid (comm) state ..." first).
    const niceOf = (tid: string) => {
      const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
    };
    const nices = fs.readdirSync(`/proc/${process.pid}/task`).map(niceOf);
    const main = niceOf(String(process.pid));
    expect(nices).toContain(engineThreadNice(main));
    if (main < 19) expect(engineThreadNice(main)).toBeGreaterThan(main);
    expect(engineThreadNice(0)).toBe(ENGINE_THREAD_NICE);
    expect(engineThreadNice(15)).toBe(19);
  });

  it("rejects a failing task with its error and goes on with the next", async () => {
    const failing = pool.run("scoreImagePair", new Uint8Array(8), new Uint8Array(8));
    const next = pool.runSticky("gallery-x", "galleryStats", "gallery-x");
    await expect(failing).rejects.toBeInstanceOf(EngineTaskError);
    await expect(failing).rejects.toThrow(/TemplateFormatError/);
    expect(await next).toEqual({ loaded: false, pets: 0, bytes: 0 });
  });

  it("runs the worker the test run compiled, as a build's server runs its build's (vitest.global-setup.ts)", () => {
    expect(workerEntryPath()).toBe(process.env.ENGINE_WORKER_ENTRY);
    expect(workerEntryPath()).toMatch(/node_modules\/\.cache\/rhinarium-test-engine-[^/]+\/engine\/worker\.mjs$/);
  });

  it("without one, runs the worker from the sources through tsx when this module runs from its sources (the CLI and the lab)", async () => {
    const compiled = process.env.ENGINE_WORKER_ENTRY;
    delete process.env.ENGINE_WORKER_ENTRY;
    const fromSources = new EnginePool(1);
    try {
      expect(workerEntryPath()).toBe(path.join(import.meta.dirname, "worker-entry.mjs"));
      const result = await fromSources.run("analyseImage", new Uint8Array(await flatJpeg(200, 200)));
      expect(result).toMatchObject({ ok: false, rejection: { code: "BLANK" } });
    } finally {
      process.env.ENGINE_WORKER_ENTRY = compiled;
      await fromSources.shutdown();
    }
  });
});
