import type { Db } from "@/lib/db/connect";
import type { Prisma } from "@/lib/generated/prisma/client";
import { readImageFile } from "@/lib/storage/images";
import { getEngine } from "./engine-port";

export interface ImageRow {
  id: string;
  filePath: string;
  usable: boolean;
  template: Uint8Array | null;
  engineVersion: number | null;
  quality: unknown;
}

export const imageSelect = { id: true, filePath: true, usable: true, template: true, engineVersion: true, quality: true } as const;

/**
 * A template from an older engine version is not silently misread: the image is analysed again
 * from its stored file and the row updated.
 */
export async function currentTemplates<T extends ImageRow>(db: Db, images: T[]): Promise<T[]> {
  const { ENGINE_VERSION, analyseImage } = await getEngine();
  const out: T[] = [];
  for (const image of images) {
    if (image.engineVersion === ENGINE_VERSION) {
      out.push(image);
      continue;
    }
    const analysis = await analyseImage(await readImageFile(image.filePath));
    const refreshed = {
      usable: analysis.ok && analysis.quality.usable && analysis.template !== null,
      template: analysis.ok && analysis.template ? Buffer.from(analysis.template) : null,
      quality: (analysis.ok ? analysis.quality : { rejection: analysis.rejection }) as Prisma.InputJsonValue,
      engineVersion: ENGINE_VERSION,
    };
    await db.fingerprintImage.update({ where: { id: image.id }, data: refreshed });
    out.push({ ...image, ...refreshed });
  }
  return out;
}

export function usableTemplates(images: ImageRow[]): Uint8Array[] {
  return images.filter((i) => i.usable && i.template).map((i) => new Uint8Array(i.template!));
}

/** The enrolled, usable templates of these pets of the account, current engine version, by pet. */
export async function enrolledTemplatesByPet(db: Db, accountId: string, petIds: string[]): Promise<Map<string, Uint8Array[]>> {
  const rows = await db.fingerprintImage.findMany({
    where: { accountId, petId: { in: petIds }, usable: true },
    select: { ...imageSelect, petId: true },
    orderBy: { createdAt: "asc" },
  });
  const byPet = new Map<string, Uint8Array[]>();
  for (const image of await currentTemplates(db, rows)) {
    if (!image.usable || !image.template || !image.petId) continue;
    byPet.set(image.petId, [...(byPet.get(image.petId) ?? []), new Uint8Array(image.template)]);
  }
  return byPet;
}
