import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { softCapture } from "./soft-capture";

/** A 320 px checkerboard of 4 px cells as JPEG: sharp edges everywhere, mean grey ~128. */
async function checkerboard(): Promise<Buffer> {
  const size = 320;
  const pixels = Buffer.alloc(size * size);
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) pixels[y * size + x] = ((x >> 2) + (y >> 2)) % 2 ? 230 : 30;
  return sharp(pixels, { raw: { width: size, height: size, channels: 1 } }).jpeg({ quality: 95 }).toBuffer();
}

/** Mean grey level and mean absolute difference between horizontal neighbours (edge energy). */
async function measure(jpeg: Buffer): Promise<{ mean: number; edges: number }> {
  const { data, info } = await sharp(jpeg).greyscale().raw().toBuffer({ resolveWithObject: true });
  let sum = 0;
  let edges = 0;
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      const at = y * info.width + x;
      sum += data[at];
      if (x > 0) edges += Math.abs(data[at] - data[at - 1]);
    }
  }
  return { mean: sum / data.length, edges: edges / (info.height * (info.width - 1)) };
}

describe("soft captures", () => {
  it("are the same for the same seed, subject and capture, and differ for another capture", async () => {
    const jpeg = await checkerboard();
    const a = await softCapture(jpeg, 1, 3, 5);
    expect(Buffer.compare(a, await softCapture(jpeg, 1, 3, 5))).toBe(0);
    expect(Buffer.compare(a, await softCapture(jpeg, 1, 3, 6))).not.toBe(0);
  });

  it("are darker (gain 0.35–0.65) and blurred: most of the edges' energy is gone", async () => {
    const jpeg = await checkerboard();
    const before = await measure(jpeg);
    for (let capture = 0; capture < 6; capture++) {
      const after = await measure(await softCapture(jpeg, 1, 0, capture));
      expect(after.mean / before.mean).toBeGreaterThan(0.3);
      expect(after.mean / before.mean).toBeLessThan(0.7);
      // Contrast scales with the gain too, so compare the edges to the darkened contrast.
      expect(after.edges / (before.edges * (after.mean / before.mean))).toBeLessThan(0.5);
    }
  });
});
