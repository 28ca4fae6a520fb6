import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { DomainError } from "@/lib/domain-errors";
import { appearanceSize } from "./uploads";

// The appearance check decodes a photo as a whole: what it refuses and what it lets through.

const photo = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 120, g: 80, b: 60 } } }).jpeg().toBuffer();

/** The same JPEG with a frame header that claims another size. */
function claimingSize(jpeg: Buffer, width: number, height: number): Buffer {
  const b = Buffer.from(jpeg);
  for (let i = 0; i < b.length - 9; i++) {
    if (b[i] === 0xff && (b[i + 1] === 0xc0 || b[i + 1] === 0xc2)) {
      b.writeUInt16BE(height, i + 5);
      b.writeUInt16BE(width, i + 7);
      return b;
    }
  }
  throw new Error("no frame header");
}

describe("the appearance check", () => {
  it("answers the size of a whole photo", async () => {
    expect(await appearanceSize(await photo(263, 247))).toEqual({ width: 263, height: 247 });
  });

  it("refuses a JPEG whose header promises 6000 x 6000 but whose data holds 263 x 247", async () => {
    const liar = claimingSize(await photo(263, 247), 6000, 6000);
    expect((await sharp(liar).metadata()).width).toBe(6000);
    await expect(appearanceSize(liar)).rejects.toBeInstanceOf(DomainError);
  });

  it("lets through a photo with extraneous bytes between markers (a warning phones produce)", async () => {
    const jpeg = await photo(64, 48);
    const dht = jpeg.indexOf(Buffer.from([0xff, 0xc4]));
    const withJunk = Buffer.concat([jpeg.subarray(0, dht), Buffer.from([0x12, 0x34, 0x56]), jpeg.subarray(dht)]);
    await expect(sharp(withJunk, { failOn: "warning" }).raw().toBuffer()).rejects.toThrow(/extraneous bytes/);
    expect(await appearanceSize(withJunk)).toEqual({ width: 64, height: 48 });
  });

  it("refuses bytes that are not an image", async () => {
    await expect(appearanceSize(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]))).rejects.toBeInstanceOf(DomainError);
  });
});
