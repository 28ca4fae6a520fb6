import type { SessionUser } from "@/lib/auth/session";
import { can } from "@/lib/auth/roles";
import type { Db } from "@/lib/db/connect";
import { readImageFile } from "@/lib/storage/images";

export type ImageKindParam = "fingerprint" | "appearance";

/**
 * The bytes of an uploaded image, for a signed-in user of the image's account who may see pets or
 * jobs; null otherwise (answered 404, as for an image that does not exist).
 */
export async function readImageForUser(db: Db, user: SessionUser | null, kind: string, imageId: string): Promise<Uint8Array | null> {
  if (!user?.accountId || !(can(user.role, "pets:read") || can(user.role, "jobs:read"))) return null;
  const where = { id: imageId, accountId: user.accountId };
  const row =
    kind === "fingerprint"
      ? await db.fingerprintImage.findFirst({ where, select: { filePath: true } })
      : kind === "appearance"
        ? await db.appearanceImage.findFirst({ where, select: { filePath: true } })
        : null;
  if (!row) return null;
  return readImageFile(row.filePath).catch(() => null);
}
