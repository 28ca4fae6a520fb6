import { randomUUID } from "node:crypto";
import sharp from "sharp";
import type { Db } from "@/lib/db/connect";
import type { Prisma } from "@/lib/generated/prisma/client";
import { DomainError, invalidInput } from "@/lib/domain-errors";
import { MAX_UPLOAD_BYTES } from "./limits";
import { getLiveSessionOrThrow } from "@/lib/capture-sessions/sessions";
import { analyseImage, ENGINE_VERSION, isJpeg } from "@/lib/engine";
import { extractionFor, writeImageBytes } from "@/lib/jobs/templates";
import { imageRelativePath, removeImageFiles, writeImageFile, type ImageKind } from "@/lib/storage/images";

/** More images improve accuracy only up to a point; the cap bounds a session's disk use and job time. */
export const MAX_FINGERPRINTS_PER_SESSION = 30;
export const MAX_APPEARANCES_PER_SESSION = 5;
const MAX_APPEARANCE_PIXELS = 40_000_000;

type Tx = Prisma.TransactionClient | Db;

async function readJpegOrThrow(file: Blob): Promise<Uint8Array> {
  if (file.size > MAX_UPLOAD_BYTES) throw invalidInput("file", `must be at most ${MAX_UPLOAD_BYTES} bytes`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.byteLength === 0) throw invalidInput("file", "must not be empty");
  // By content, not by the declared type or file name.
  if (!isJpeg(bytes)) throw invalidInput("file", "must be a JPEG image");
  return bytes;
}

/** An upload is accepted only into a live, unused session, below the per-session cap. */
async function getOpenSessionOrThrow(db: Tx, accountId: string, sessionId: string, kind: ImageKind) {
  const session = await getLiveSessionOrThrow(db, accountId, sessionId);
  if (session.usedAt) throw new DomainError("CaptureSessionAlreadyUsed");
  const count =
    kind === "fingerprint"
      ? await db.fingerprintImage.count({ where: { sessionId } })
      : await db.appearanceImage.count({ where: { sessionId } });
  const cap = kind === "fingerprint" ? MAX_FINGERPRINTS_PER_SESSION : MAX_APPEARANCES_PER_SESSION;
  if (count >= cap) throw invalidInput("file", `the session already holds the maximum of ${cap} ${kind} images`);
  return session;
}

/** Whether the session takes one more image of this kind (the same checks as the upload's own, made before its body is read). */
export async function assertUploadAccepted(db: Db, accountId: string, sessionId: string, kind: ImageKind): Promise<void> {
  await getOpenSessionOrThrow(db, accountId, sessionId, kind);
}

/**
 * Writes the file, then inserts its row in a transaction that locks the session row and checks the
 * session again. A job start (which claims the session) or a pet deletion (which locks the pet's
 * sessions first) either came before, and the upload is refused (20014, 20010) with its file
 * removed, or waits for it, and then sees the image: an acknowledged image is always part of what
 * the job reads or what the deletion removes, and the per-session cap holds under concurrent uploads.
 */
async function storeImage<T>(
  db: Db,
  image: { accountId: string; sessionId: string; kind: ImageKind; relativePath: string; bytes: Uint8Array },
  insert: (tx: Tx) => Promise<T>,
): Promise<T> {
  await writeImageFile(image.relativePath, image.bytes);
  try {
    return await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT 1 FROM "CaptureSession" WHERE id = ${image.sessionId} FOR UPDATE`;
      await getOpenSessionOrThrow(tx, image.accountId, image.sessionId, image.kind);
      return insert(tx);
    });
  } catch (error) {
    await removeImageFiles([image.relativePath]);
    throw error;
  }
}

/**
 * Stores a nose image with its quality report and template (and a 1:N probe's quarter-turned views, `extractionFor`).
 * The engine analyses it now, so a file it cannot read at all is refused at once (10001); a readable but poor image is
 * stored, counts towards the session, and later fails the job with its quality figures recorded.
 */
export async function uploadFingerprint(db: Db, accountId: string, sessionId: string, file: Blob): Promise<{ id: string }> {
  const bytes = await readJpegOrThrow(file);
  const session = await getOpenSessionOrThrow(db, accountId, sessionId, "fingerprint");
  const analysis = await analyseImage(bytes, extractionFor(session.purpose));
  if (!analysis.ok) throw invalidInput("file", analysis.rejection.message);
  const id = randomUUID();
  const filePath = imageRelativePath(accountId, sessionId, "fingerprint", id);
  return storeImage(db, { accountId, sessionId, kind: "fingerprint", relativePath: filePath, bytes }, async (tx) => {
    const row = await tx.fingerprintImage.create({
      data: {
        id,
        accountId,
        sessionId,
        filePath,
        byteSize: bytes.byteLength,
        quality: JSON.parse(JSON.stringify(analysis.quality)),
        usable: analysis.quality.usable && analysis.template !== null,
        engineVersion: ENGINE_VERSION,
      },
      select: { id: true },
    });
    // In the same transaction: the row is never seen without its template (nor a 1:N probe's without its views).
    await writeImageBytes(tx, id, { template: analysis.template, turnedViews: analysis.turnedViews });
    return row;
  });
}

/**
 * The size of an appearance photo that decodes as a whole, or 10001. A JPEG whose header promises
 * more than its data holds decodes with libjpeg's "premature end" warning, which the check catches;
 * other warnings (extraneous bytes, common in phone files) do not refuse a photo.
 */
export async function appearanceSize(bytes: Uint8Array): Promise<{ width: number; height: number }> {
  const decode = (failOn: "warning" | "truncated") =>
    sharp(bytes, { failOn, limitInputPixels: MAX_APPEARANCE_PIXELS }).resize(32, 32, { fit: "inside" }).raw().toBuffer();
  try {
    await decode("warning").catch((error: Error) => {
      if (/premature end|truncated/i.test(error.message)) throw error;
      return decode("truncated");
    });
    const meta = await sharp(bytes).metadata();
    if (!meta.width || !meta.height) throw new Error("no size");
    return { width: meta.width, height: meta.height };
  } catch {
    throw invalidInput("file", "is not a readable JPEG image");
  }
}

/** Stores an appearance photo after checking that it decodes as a whole. */
export async function uploadAppearance(db: Db, accountId: string, sessionId: string, file: Blob): Promise<{ id: string }> {
  const bytes = await readJpegOrThrow(file);
  await getOpenSessionOrThrow(db, accountId, sessionId, "appearance");
  const size = await appearanceSize(bytes);
  const id = randomUUID();
  const filePath = imageRelativePath(accountId, sessionId, "appearance", id);
  return storeImage(db, { accountId, sessionId, kind: "appearance", relativePath: filePath, bytes }, (tx) =>
    tx.appearanceImage.create({
      data: { id, accountId, sessionId, filePath, byteSize: bytes.byteLength, ...size },
      select: { id: true },
    }),
  );
}
