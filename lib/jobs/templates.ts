import { LRUCache } from "lru-cache";
import type { Db } from "@/lib/db/connect";
import { rowsWithBytes } from "@/lib/db/binary-rows";
import { Prisma } from "@/lib/generated/prisma/client";
import { readImageFile } from "@/lib/storage/images";
import type { SessionPurpose } from "@/lib/generated/prisma/client";
import { analyseImage, ENGINE_VERSION, inSharedMemory, lightTemplateOf, searchKeyOfTemplate, type ExtractionOptions, type ProbeTurns } from "@/lib/engine";

export interface ImageRow {
  id: string;
  filePath: string;
  usable: boolean;
  template: Uint8Array | null;
  engineVersion: number | null;
  quality: unknown;
  /** A 1:N probe image's quarter-turned views, made at its upload (joined; decision 0042); null for other images. */
  turnedViews: Uint8Array | null;
}

/**
 * The image rows `where` selects (in the order they were added), their stored bytes read by rowsWithBytes: PGlite
 * parses a `bytea` value the ORM reads in JavaScript a byte at a time, on the event loop every other request waits on
 * (a 1:N probe's three templates, ~360 KB, took ~23 ms that way: lab/bench/pglite-bytes.ts).
 */
export async function imageRows(db: Db, where: Prisma.Sql): Promise<(ImageRow & { petId: string | null })[]> {
  return rowsWithBytes<ImageRow & { petId: string | null }>(
    db,
    ["template", "turnedViews"],
    (bytes) => Prisma.sql`
    SELECT id, "filePath", usable, "engineVersion", quality, "petId", ${bytes(Prisma.sql`template`)} AS template, ${bytes(Prisma.sql`"turnedViews"`)} AS "turnedViews"
    FROM "FingerprintImage"
    WHERE ${where}
    ORDER BY "createdAt", id`,
  );
}

/**
 * How the nose images of a session of this purpose are extracted: a 1:N probe's with the outer frames that only its
 * first-stage lookups read and the quarter-turned views its turned pass compares (decision 0042), every other image
 * without them (ExtractionOptions).
 */
export function extractionFor(purpose: SessionPurpose): ExtractionOptions {
  const probe = purpose === "PET_IDENTIFICATION";
  return { outerFrames: probe, turnedViews: probe };
}

/** The stored bytes of an image row, beside its file: the template, the parts cut from it for 1:N, a 1:N probe's views. */
const IMAGE_BYTE_COLUMNS = ["template", "searchKey", "lightTemplate", "turnedViews"] as const;
type ImageBytes = Partial<Record<(typeof IMAGE_BYTE_COLUMNS)[number], Uint8Array | null>>;

/**
 * Writes an image row's stored bytes (null clears) by plain SQL in base64, the other way of `imageRows`: PGlite
 * serialises a `bytea` parameter in JavaScript, on the event loop (~12 ms for a 120 KB template, ~2 ms in base64).
 */
export async function writeImageBytes(db: Db | Prisma.TransactionClient, id: string, bytes: ImageBytes): Promise<void> {
  const sets = IMAGE_BYTE_COLUMNS.filter((column) => bytes[column] !== undefined).map((column) => {
    const value = bytes[column];
    return Prisma.sql`${Prisma.raw(`"${column}"`)} = decode(${value ? Buffer.from(value).toString("base64") : null}::text, 'base64')`;
  });
  if (sets.length > 0) await db.$executeRaw`UPDATE "FingerprintImage" SET ${Prisma.join(sets)} WHERE id = ${id}`;
}

/**
 * A template from an older engine version is not silently misread: the image is analysed again
 * from its stored file (as `extraction` says; enrolled images' way by default) and the row updated
 * (its stored search key and light template cleared).
 */
export async function currentTemplates<T extends ImageRow>(db: Db, images: T[], extraction: ExtractionOptions = {}): Promise<T[]> {
  const out: T[] = [];
  for (const image of images) {
    if (image.engineVersion === ENGINE_VERSION) {
      out.push(image);
      continue;
    }
    const analysis = await analyseImage(await readImageFile(image.filePath), extraction);
    const template = analysis.ok && analysis.template ? analysis.template : null;
    const refreshed = {
      usable: analysis.ok && analysis.quality.usable && template !== null,
      quality: (analysis.ok ? analysis.quality : { rejection: analysis.rejection }) as Prisma.InputJsonValue,
      engineVersion: ENGINE_VERSION,
    };
    // The parts cut from the old template (enrolledCutsByPet) go with it; the bytes first, so that a row whose update
    // stops between the two is still of the old version, and extracted again.
    const turnedViews = analysis.ok ? analysis.turnedViews : null;
    await writeImageBytes(db, image.id, { template, searchKey: null, lightTemplate: null, turnedViews });
    await db.fingerprintImage.update({ where: { id: image.id }, data: refreshed });
    out.push({ ...image, ...refreshed, template, turnedViews });
  }
  return out;
}

/** The images a comparison reads: usable, with a template. */
function usableImages(images: ImageRow[]): ImageRow[] {
  return images.filter((i) => i.usable && i.template);
}

export function usableTemplates(images: ImageRow[]): Uint8Array[] {
  return usableImages(images).map((i) => new Uint8Array(i.template!));
}

/**
 * The stored JPEGs of the images `usableTemplates` returns, in its order: a verification tries probe images the upright
 * comparison does not accept at a quarter turn, from their pixels (decision 0029). A file that cannot be read is
 * reported to `onError` and given as empty bytes: that image is compared upright only.
 */
export async function usableImageFiles(images: ImageRow[], onError: (error: unknown, image: ImageRow) => void): Promise<Uint8Array[]> {
  return Promise.all(
    usableImages(images).map((image) =>
      readImageFile(image.filePath).catch((error: unknown) => {
        onError(error, image);
        return new Uint8Array(0);
      }),
    ),
  );
}

/**
 * How each image `usableTemplates` returns is turned for a 1:N search's turned pass, in its order: the views its upload
 * stored, else its stored JPEG (an image uploaded before views were stored; `usableImageFiles`' rules when it cannot be
 * read), read only for those.
 */
export async function usableProbeTurns(images: ImageRow[], onError: (error: unknown, image: ImageRow) => void): Promise<ProbeTurns[]> {
  const usable = usableImages(images);
  const files = await usableImageFiles(usable.filter((image) => !image.turnedViews), onError);
  let next = 0;
  return usable.map((image) => (image.turnedViews ? { views: image.turnedViews } : { jpeg: files[next++] }));
}

/**
 * Writes the parts of a registration's usable images that 1:N reads (the search key galleries load, the light template
 * a deep pass compares), cut from their templates, so that no search has to cut and store them.
 */
export async function writeEnrolmentCuts(db: Db, images: ImageRow[]): Promise<void> {
  for (const image of images) {
    if (!image.usable || !image.template) continue;
    const template = new Uint8Array(image.template);
    await writeImageBytes(db, image.id, { searchKey: searchKeyOfTemplate(template), lightTemplate: lightTemplateOf(template) });
  }
}

/**
 * The 1:N search keys of these pets' enrolled, usable images, by pet: what galleries hold, a few KB
 * per image instead of the whole template.
 */
export async function enrolledSearchKeysByPet(db: Db, accountId: string, petIds: string[]): Promise<Map<string, Uint8Array[]>> {
  return enrolledCutsByPet(db, accountId, petIds, "searchKey", searchKeyOfTemplate);
}

/**
 * Light templates this process has read, by image id, up to LIGHT_TEMPLATE_CACHE_BYTES (least recently used dropped
 * first). A deep pass reads ~22 MB of them for its 368 pets; in a gallery of a few thousand pets the next unknown
 * animal's deep pass reads mostly the same pets. An image's light template never changes while its row is of this
 * engine version (an older row is extracted again and cut again, under the same id: only rows of this version are
 * taken from here), and the images and pets come from the database each time, so a deleted one is never answered.
 */
export const LIGHT_TEMPLATE_CACHE_BYTES = 256 * 2 ** 20;
const lightTemplateCache = new LRUCache<string, Uint8Array>({ maxSize: LIGHT_TEMPLATE_CACHE_BYTES, sizeCalculation: (part) => part.byteLength });

/** Empties the light templates kept in memory (a bench times a deep pass's read from the database). */
export function forgetLightTemplates(): void {
  lightTemplateCache.clear();
}

/**
 * The light templates (`lightTemplateOf`) of these pets' enrolled, usable images, by pet: what the 1:N cascade's
 * light comparison reads, about a fifth of each template.
 */
export async function enrolledLightTemplatesByPet(db: Db, accountId: string, petIds: string[]): Promise<Map<string, Uint8Array[]>> {
  return enrolledCutsByPet(db, accountId, petIds, "lightTemplate", lightTemplateOf, lightTemplateCache);
}

/**
 * A part cut from each enrolled, usable image's template, by pet, read from its own column. A part is cut from the
 * template (re-extracted first if it is of an older engine version) and stored the first time an image is loaded
 * this way; a stored part of an older engine version is cut again. With a `cache`, the images are listed first and
 * only the parts the cache lacks are read.
 */
async function enrolledCutsByPet(
  db: Db,
  accountId: string,
  petIds: string[],
  column: "searchKey" | "lightTemplate",
  cut: (template: Uint8Array) => Uint8Array,
  cache?: LRUCache<string, Uint8Array>,
): Promise<Map<string, Uint8Array[]>> {
  if (petIds.length === 0) return new Map();
  const partColumn = Prisma.raw(column === "searchKey" ? '"searchKey"' : '"lightTemplate"');
  const listed = cache
    ? await db.$queryRaw<{ id: string; petId: string | null; current: boolean }[]>`
        SELECT id, "petId", ("engineVersion" = ${ENGINE_VERSION} AND ${partColumn} IS NOT NULL) AS current
        FROM "FingerprintImage"
        WHERE "accountId" = ${accountId} AND "petId" = ANY(${petIds}::text[]) AND usable
        ORDER BY "createdAt", id`
    : null;
  const cached = new Map<string, Uint8Array>();
  for (const row of listed ?? []) {
    const hit = row.current ? cache!.get(row.id) : undefined;
    if (hit) cached.set(row.id, hit);
  }
  const rows =
    listed && cached.size === listed.length
      ? []
      : await rowsWithBytes<{ id: string; petId: string | null; engineVersion: number | null; part: Uint8Array | null }>(
          db,
          ["part"],
          (bytes) => Prisma.sql`
    SELECT id, "petId", "engineVersion", ${bytes(partColumn)} AS part
    FROM "FingerprintImage"
    WHERE "accountId" = ${accountId} AND "petId" = ANY(${petIds}::text[]) AND usable
      ${cached.size > 0 ? Prisma.sql`AND NOT (id = ANY(${[...cached.keys()]}::text[]))` : Prisma.empty}
    ORDER BY "createdAt", id`,
        );
  const missing = rows.filter((row) => row.part === null || row.engineVersion !== ENGINE_VERSION).map((row) => row.id);
  // The parts a search posts to the engine at every pass (the light templates, kept) lie in shared memory.
  const kept = cache ? inSharedMemory : (bytes: Uint8Array) => new Uint8Array(bytes);
  const parts = new Map<string, Uint8Array>(cached);
  if (missing.length > 0) {
    const images = await currentTemplates(db, await imageRows(db, Prisma.sql`id = ANY(${missing}::text[])`));
    for (const image of images) {
      if (!image.usable || !image.template) continue;
      const part = kept(cut(new Uint8Array(image.template)));
      await writeImageBytes(db, image.id, { [column]: part });
      parts.set(image.id, part);
      cache?.set(image.id, part);
    }
  }
  const isMissing = new Set(missing);
  for (const row of rows) {
    if (isMissing.has(row.id)) continue;
    const part = kept(row.part!);
    parts.set(row.id, part);
    cache?.set(row.id, part);
  }
  const byPet = new Map<string, Uint8Array[]>();
  for (const row of listed ?? rows) {
    const part = parts.get(row.id);
    if (!part || !row.petId) continue;
    byPet.set(row.petId, [...(byPet.get(row.petId) ?? []), part]);
  }
  return byPet;
}

/** The enrolled, usable templates of these pets of the account, current engine version, by pet. */
export async function enrolledTemplatesByPet(db: Db, accountId: string, petIds: string[]): Promise<Map<string, Uint8Array[]>> {
  if (petIds.length === 0) return new Map();
  const rows = await imageRows(db, Prisma.sql`"accountId" = ${accountId} AND "petId" = ANY(${petIds}::text[]) AND usable`);
  const byPet = new Map<string, Uint8Array[]>();
  for (const image of await currentTemplates(db, rows)) {
    if (!image.usable || !image.template || !image.petId) continue;
    byPet.set(image.petId, [...(byPet.get(image.petId) ?? []), new Uint8Array(image.template)]);
  }
  return byPet;
}
