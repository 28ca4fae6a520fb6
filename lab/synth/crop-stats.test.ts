import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatSummary, measureCrops, quantile, REAL_CROP_STATS, summarise, type CropRecord } from "./crop-stats";

describe("crop statistics", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "crop-stats-"));
    const flat = (value: number, size: number) =>
      sharp({ create: { width: size, height: size, channels: 3, background: { r: value, g: value, b: value } } }).png();
    await flat(100, 64).toFile(path.join(dir, "flat-100.png"));
    await flat(250, 400).toFile(path.join(dir, "white.png"));
    // Left half black, right half white: a known contrast and a known Laplacian response.
    const half = Buffer.alloc(64 * 64 * 3);
    for (let y = 0; y < 64; y++) for (let x = 32; x < 64; x++) half.fill(255, (y * 64 + x) * 3, (y * 64 + x) * 3 + 3);
    await sharp(half, { raw: { width: 64, height: 64, channels: 3 } }).png().toFile(path.join(dir, "halves.png"));
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("measures known images as REAL-DATA.md defines the measures", async () => {
    const records = await measureCrops(dir);
    const byName = new Map(records.map((r) => [path.basename(r.file), r]));
    const flat = byName.get("flat-100.png")!;
    expect(flat).toMatchObject({ size: 64, sharpness: 0, sharpness320: 0, contrast: 0, padContrast: 0, glare: 0, keypoints: 0, keypointSize: null });
    expect(flat.brightness).toBeCloseTo(100, 6);
    expect(flat.padBrightness).toBeCloseTo(100, 6);
    expect(flat.padColour).toBe(0);
    const white = byName.get("white.png")!;
    expect(white).toMatchObject({ size: 400, glare: 1, wetHighlights: 1, sharpness: 0 });
    const halves = byName.get("halves.png")!;
    expect(halves.brightness).toBeCloseTo(127.5, 6);
    expect(halves.contrast).toBeCloseTo(127.5, 6);
    expect(halves.sharpness).toBeGreaterThan(0);
    expect(halves.glare).toBeCloseTo(0.5, 1);
  }, 120_000);

  it("summarises quantiles numpy's way and says whether each median lies in the real IQR", () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantile([7], 0.95)).toBe(7);
    const record = (brightness: number): CropRecord => ({
      file: "x", size: 224, shortSide: 224, sharpness320: 50, sharpness: 175, brightness, contrast: 46, padBrightness: 47,
      padContrast: 29, padColour: 59, glare: 0, wetHighlights: 0.0004, keypoints: 354, keypointsClahe: 1149, keypointSize: null,
    });
    const summary = summarise([record(69), record(200), record(200)]);
    const brightness = summary.find((s) => s.measure === "brightness")!;
    expect(brightness.set[2]).toBe(200);
    expect(brightness.real).toEqual(REAL_CROP_STATS.brightness.quantiles);
    expect(brightness.medianWithinRealIqr).toBe(false);
    expect(summary.find((s) => s.measure === "size")!.medianWithinRealIqr).toBe(true);
    // No crop had keypoints: no median, and it is not counted as matching.
    expect(summary.find((s) => s.measure === "keypointSize")!.medianWithinRealIqr).toBe(false);
    expect(formatSummary(summary, 3)).toContain(`${summary.length - 2} of ${summary.length} medians`);
  });
});
