import { afterAll, describe, expect, it } from "vitest";
import { flatJpeg } from "@/lib/test-support/nose-images";
import { EnginePool, EngineTaskError } from "./engine-pool";

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

  it("rejects a failing task with its error and goes on with the next", async () => {
    const failing = pool.run("scoreImagePair", new Uint8Array(8), new Uint8Array(8));
    const next = pool.runSticky("gallery-x", "galleryStats", "gallery-x");
    await expect(failing).rejects.toBeInstanceOf(EngineTaskError);
    await expect(failing).rejects.toThrow(/TemplateFormatError/);
    expect(await next).toEqual({ loaded: false, pets: 0, bytes: 0 });
  });
});
