import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { decodeNoseImage, isJpeg } from "./decode";
import { ImageRejection } from "./image-rejection";
import { MAX_INPUT_PIXELS, WORK_SIZE } from "./parameters";

function noiseJpeg(width: number, height: number, options: { quality?: number } = {}): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height);
  let state = 12345;
  for (let i = 0; i < pixels.length; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    pixels[i] = state >> 23;
  }
  return sharp(pixels, { raw: { width, height, channels: 1 } }).jpeg({ quality: options.quality ?? 90 }).toBuffer();
}

/** Rewrites the frame size in the SOF marker: a small file that claims to be enormous. */
function withClaimedSize(jpeg: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(jpeg);
  for (let i = 2; i < copy.length - 9; i++) {
    if (copy[i] === 0xff && copy[i + 1] >= 0xc0 && copy[i + 1] <= 0xc2) {
      copy.writeUInt16BE(height, i + 5);
      copy.writeUInt16BE(width, i + 7);
      return copy;
    }
  }
  throw new Error("no SOF marker");
}

async function rejectionOf(bytes: Uint8Array): Promise<string> {
  try {
    await decodeNoseImage(bytes);
  } catch (error) {
    if (error instanceof ImageRejection) return error.code;
    throw error;
  }
  return "accepted";
}

describe("decodeNoseImage", () => {
  it("accepts a JPEG and resamples it so the longer side is WORK_SIZE", async () => {
    const decoded = await decodeNoseImage(await noiseJpeg(640, 480));
    expect(decoded.image.width).toBe(WORK_SIZE);
    expect(decoded.image.height).toBe(240);
    expect(decoded.originalWidth).toBe(640);
  });

  it("applies EXIF orientation before measuring", async () => {
    const rotated = await sharp(await noiseJpeg(400, 200)).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const decoded = await decodeNoseImage(rotated);
    expect([decoded.originalWidth, decoded.originalHeight]).toEqual([200, 400]);
    expect(decoded.image.height).toBe(WORK_SIZE);
  });

  it("judges JPEG by content, not by name", async () => {
    const png = await sharp(Buffer.alloc(200 * 200, 128), { raw: { width: 200, height: 200, channels: 1 } }).png().toBuffer();
    expect(isJpeg(png)).toBe(false);
    expect(await rejectionOf(png)).toBe("NOT_JPEG");
    expect(await rejectionOf(new Uint8Array(0))).toBe("NOT_JPEG");
    expect(await rejectionOf(Buffer.from("GIF89a not an image at all"))).toBe("NOT_JPEG");
  });

  it("rejects tiny, blank, truncated and decompression-bomb images", async () => {
    expect(await rejectionOf(await noiseJpeg(63, 80))).toBe("TOO_SMALL");
    const blank = await sharp(Buffer.alloc(300 * 300, 90), { raw: { width: 300, height: 300, channels: 1 } }).jpeg().toBuffer();
    expect(await rejectionOf(blank)).toBe("BLANK");
    const whole = await noiseJpeg(300, 300);
    expect(await rejectionOf(whole.subarray(0, whole.length >> 1))).toBe("CORRUPT");
    const side = Math.ceil(Math.sqrt(MAX_INPUT_PIXELS)) + 100;
    expect(await rejectionOf(withClaimedSize(await noiseJpeg(300, 300), side, side))).toBe("TOO_LARGE");
  });

  it("decodes crops down to 64 px on the short side (real detector crops reach ~70 px): quality, not size, decides", async () => {
    const decoded = await decodeNoseImage(await noiseJpeg(64, 72));
    expect([decoded.originalWidth, decoded.originalHeight]).toEqual([64, 72]);
    expect(Math.max(decoded.image.width, decoded.image.height)).toBe(WORK_SIZE);
  });

  it("rejects a JPEG signature followed by garbage", async () => {
    const garbage = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(500, 7)]);
    expect(await rejectionOf(garbage)).toBe("CORRUPT");
  });
});
