import { randomUUID } from "node:crypto";
import sharp from "sharp";
import type { Db } from "@/lib/db/connect";
import { ApiError, validationError } from "@/lib/api/errors";
import { MAX_UPLOAD_BYTES } from "@/lib/api/body";
import { getLiveSessionOrThrow } from "@/lib/capture-sessions/sessions";
import { getEngine } from "@/lib/jobs/engine-port";
import { imageRelativePath, removeImageFiles, writeImageFile, type ImageKind } from "@/lib/storage/images";

/** More images improve accuracy only up to a point; the cap bounds a session's disk use and job time. */
export const MAX_FINGERPRINTS_PER_SESSION = 30;
export const MAX_APPEARANCES_PER_SESSION = 5;
const MAX_APPEARANCE_PIXELS = 40_000_000;

async function readJpegOrThrow(file: Blob): Promise<Uint8Array> {
  if (file.size > MAX_UPLOAD_BYTES) throw validationError("file", `must be at most ${MAX_UPLOAD_BYTES} bytes`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.byteLength === 0) throw validationError("file", "must not be empty");
  // By content, not by the declared type or file name.
  if (!(await getEngine()).isJpeg(bytes)) throw validationError("file", "must be a JPEG image");
  return bytes;
}

/** An upload is accepted only into a live, unused session, below the per-session cap. */
async function getOpenSessionOrThrow(db: Db, accountId: string, sessionId: string, kind: ImageKind) {
  const session = await getLiveSessionOrThrow(db, accountId, sessionId);
  if (session.usedAt) throw new ApiError("CaptureSessionAlreadyUsedError");
  const count =
    kind === "fingerprint"
      ? await db.fingerprintImage.count({ where: { sessionId } })
      : await db.appearanceImage.count({ where: { sessionId } });
  const cap = kind === "fingerprint" ? MAX_FINGERPRINTS_PER_SESSION : MAX_APPEARANCES_PER_SESSION;
  if (count >= cap) throw validationError("file", `the session already holds the maximum of ${cap} ${kind} images`);
  return session;
}

async function storeThenInsert<T>(relativePath: string, bytes: Uint8Array, insert: () => Promise<T>): Promise<T> {
  await writeImageFile(relativePath, bytes);
  try {
    return await insert();
  } catch (error) {
    await removeImageFiles([relativePath]);
    throw error;
  }
}

/**
 * Stores a nose image with its quality report and template. The engine analyses it now, so a file
 * it cannot read at all is refused at once (10001); a readable but poor image is stored, counts
 * towards the session, and later fails the job with its quality figures recorded.
 */
export async function uploadFingerprint(db: Db, accountId: string, sessionId: string, file: Blob): Promise<{ id: string }> {
  const bytes = await readJpegOrThrow(file);
  await getOpenSessionOrThrow(db, accountId, sessionId, "fingerprint");
  const engine = await getEngine();
  const analysis = await engine.analyseImage(bytes);
  if (!analysis.ok) throw validationError("file", analysis.rejection.message);
  const id = randomUUID();
  const filePath = imageRelativePath(accountId, sessionId, "fingerprint", id);
  return storeThenInsert(filePath, bytes, () =>
    db.fingerprintImage.create({
      data: {
        id,
        accountId,
        sessionId,
        filePath,
        byteSize: bytes.byteLength,
        quality: JSON.parse(JSON.stringify(analysis.quality)),
        usable: analysis.quality.usable && analysis.template !== null,
        template: analysis.template ? Buffer.from(analysis.template) : null,
        engineVersion: engine.ENGINE_VERSION,
      },
      select: { id: true },
    }),
  );
}

/** Stores an appearance photo after checking that it decodes as a whole. */
export async function uploadAppearance(db: Db, accountId: string, sessionId: string, file: Blob): Promise<{ id: string }> {
  const bytes = await readJpegOrThrow(file);
  await getOpenSessionOrThrow(db, accountId, sessionId, "appearance");
  let size: { width: number; height: number };
  try {
    const { info } = await sharp(bytes, { failOn: "truncated", limitInputPixels: MAX_APPEARANCE_PIXELS })
      .resize(32, 32, { fit: "inside" })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const meta = await sharp(bytes).metadata();
    size = { width: meta.width ?? info.width, height: meta.height ?? info.height };
  } catch {
    throw validationError("file", "is not a readable JPEG image");
  }
  const id = randomUUID();
  const filePath = imageRelativePath(accountId, sessionId, "appearance", id);
  return storeThenInsert(filePath, bytes, () =>
    db.appearanceImage.create({
      data: { id, accountId, sessionId, filePath, byteSize: bytes.byteLength, ...size },
      select: { id: true },
    }),
  );
}
