import sharp from "sharp";
import { createGreyImage, meanAndStd, type GreyImage } from "./grey-image";
import { ImageRejection } from "./image-rejection";
import { BLANK_STDDEV, MAX_INPUT_PIXELS, MIN_INPUT_SIDE, WORK_SIZE } from "./parameters";

export interface DecodedNoseImage {
  /** Grey image resampled so its longer side is WORK_SIZE, EXIF orientation applied. */
  readonly image: GreyImage;
  readonly originalWidth: number;
  readonly originalHeight: number;
}

/** JPEG by content: every JPEG stream starts with SOI (FFD8) followed by a marker (FF). */
export function isJpeg(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
}

function openJpeg(bytes: Uint8Array) {
  return sharp(bytes, { failOn: "truncated", limitInputPixels: MAX_INPUT_PIXELS, sequentialRead: true });
}

async function readOrientedSize(bytes: Uint8Array): Promise<{ width: number; height: number }> {
  const metadata = await openJpeg(bytes)
    .metadata()
    .catch((error: Error) => {
      // sharp refuses to even read the header of an image over limitInputPixels.
      if (/pixel limit/i.test(error.message)) {
        throw new ImageRejection("TOO_LARGE", `the image exceeds the ${MAX_INPUT_PIXELS / 1e6} MP limit`);
      }
      throw new ImageRejection("CORRUPT", `the JPEG header cannot be read (${error.message})`);
    });
  if (metadata.format !== "jpeg") throw new ImageRejection("NOT_JPEG", "the file is not a JPEG image");
  const { width, height, orientation } = metadata;
  if (!width || !height) throw new ImageRejection("CORRUPT", "the JPEG has no dimensions");
  // EXIF orientations 5–8 rotate by 90°, swapping the displayed width and height.
  return orientation && orientation >= 5 ? { width: height, height: width } : { width, height };
}

/** Decode and check an upload. Throws ImageRejection for anything that is not a usable JPEG. */
export async function decodeNoseImage(bytes: Uint8Array): Promise<DecodedNoseImage> {
  if (!isJpeg(bytes)) throw new ImageRejection("NOT_JPEG", "the file is not a JPEG image (checked by content)");
  const { width, height } = await readOrientedSize(bytes);
  if (width * height > MAX_INPUT_PIXELS) {
    throw new ImageRejection("TOO_LARGE", `${width}x${height} exceeds the ${MAX_INPUT_PIXELS / 1e6} MP limit`);
  }
  if (Math.min(width, height) < MIN_INPUT_SIDE) {
    throw new ImageRejection("TOO_SMALL", `${width}x${height} is below the ${MIN_INPUT_SIDE} px minimum side`);
  }
  const scale = WORK_SIZE / Math.max(width, height);
  const workWidth = Math.max(1, Math.round(width * scale));
  const workHeight = Math.max(1, Math.round(height * scale));
  const { info, data } = await openJpeg(bytes)
    .rotate()
    .toColourspace("b-w")
    .resize({ width: workWidth, height: workHeight, fit: "fill", kernel: "cubic" })
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch((error: Error) => {
      throw new ImageRejection("CORRUPT", `the JPEG data cannot be decoded (${error.message})`);
    });
  const pixels = new Float32Array(info.width * info.height);
  for (let i = 0, j = 0; i < pixels.length; i++, j += info.channels) pixels[i] = data[j];
  const image = createGreyImage(info.width, info.height, pixels);
  if (meanAndStd(pixels).std < BLANK_STDDEV) throw new ImageRejection("BLANK", "the image has no visible texture");
  return { image, originalWidth: width, originalHeight: height };
}
