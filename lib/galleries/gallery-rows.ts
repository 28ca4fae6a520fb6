import type { Db } from "@/lib/db/connect";
import { Prisma } from "@/lib/generated/prisma/client";
import type { Species } from "@/lib/generated/prisma/enums";
import { ENGINE_VERSION, galleryBatchWriter, type ShardedPets } from "@/lib/engine";
import { binaryRows } from "@/lib/db/binary-rows";
import { enrolledSearchKeysByPet } from "@/lib/jobs/templates";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { logError } from "@/lib/log";

/**
 * What one identification searches: the pets of one species in the account's search pool (poolId
 * null = the default pool, every pet of the account) that have usable enrolled fingerprints.
 */
export interface GalleryScope {
  accountId: string;
  poolId: string | null;
  species: Species;
}

interface PackedRow {
  petId: string;
  /**
   * The pet's gallery entry (PetSearchKeys.keys: its enrolled, usable images' search keys in enrolment order, packed
   * as the engine indexes them), null when the entry is missing or no longer the pet's images: as bytes where the
   * database has a binary reader (lib/db/binary-rows.ts), else in base64 (a client without one).
   */
  keys: Uint8Array | string | null;
}

/** The images' search keys packed as the engine indexes them (PackedPets: each after its byte length, 4 bytes big-endian), in enrolment order. */
const PACKED_KEYS = Prisma.sql`string_agg(int4send(length(f."searchKey")) || f."searchKey", ''::bytea ORDER BY f."createdAt", f.id)`;

/**
 * Writes these pets' gallery entries (PetSearchKeys) from their usable images' stored search keys, in one statement
 * run by the database: at enrolment, in the transaction that gives the pet its images, and by a load that found an
 * entry missing or out of date. A pet one of whose images lacks a current search key gets none (its load cuts them).
 */
export async function writePetSearchKeys(db: Db | Prisma.TransactionClient, accountId: string, petIds: string[]): Promise<void> {
  if (petIds.length === 0) return;
  await db.$executeRaw`
    INSERT INTO "PetSearchKeys" ("petId", "accountId", "imageIds", "engineVersion", keys)
    SELECT f."petId", ${accountId}, array_agg(f.id ORDER BY f."createdAt", f.id), ${ENGINE_VERSION}::int, ${PACKED_KEYS}
    FROM "FingerprintImage" f
    WHERE f."accountId" = ${accountId} AND f."petId" = ANY(${petIds}::text[]) AND f.usable
    GROUP BY f."petId"
    HAVING bool_and(f."searchKey" IS NOT NULL AND f."engineVersion" IS NOT DISTINCT FROM ${ENGINE_VERSION}::int)
    ON CONFLICT ("petId") DO UPDATE
      SET "accountId" = excluded."accountId", "imageIds" = excluded."imageIds", "engineVersion" = excluded."engineVersion", keys = excluded.keys`;
}

/** The condition on `p` ("Pet") for a pet of the scope's gallery: of its account, species and pool, with a usable image. */
function inGallery(scope: GalleryScope): Prisma.Sql {
  return Prisma.sql`p."accountId" = ${scope.accountId} AND p.species = ${scope.species}::"Species"
        AND (${scope.poolId}::text IS NULL OR p."poolId" = ${scope.poolId}::text)
        AND EXISTS (SELECT 1 FROM "FingerprintImage" e WHERE e."accountId" = p."accountId" AND e."petId" = p.id AND e.usable)`;
}

/** How many pets the scope's gallery holds in the database (what a loaded gallery must hold once its changes are applied). */
export async function galleryPetCount(db: Db, scope: GalleryScope): Promise<number> {
  const [row] = await db.$queryRaw<{ pets: bigint }[]>`SELECT count(*) AS pets FROM "Pet" p WHERE ${inGallery(scope)}`;
  return Number(row.pets);
}

/**
 * The next `limit` pets of a gallery after pet id `after` (by id), each with its gallery entry, packed for the engine
 * (`galleryUpsertPets`): one plain SQL query a batch, one row a pet, its entry one stored value (decision 0049)
 * decoded straight into the buffer of the engine shard that will index it. The query lists the pet's usable images (their rows, not their bytes) and
 * takes the entry only while it is of exactly those images and of this engine version. A pet without such an entry (an
 * image added or removed since, an older engine, enrolled before entries were written) is read image by image by
 * enrolledSearchKeysByPet, which cuts and stores what is missing, and its entry is written anew. Resolves null after
 * the last pet.
 */
export async function galleryBatchAfter(db: Db, scope: GalleryScope, after: string, limit: number): Promise<{ last: string; pets: ShardedPets } | null> {
  // A subquery a pet: one lookup by key each, where a join may read the whole table for every batch.
  const entry = Prisma.sql`(SELECT CASE WHEN i.current AND k."accountId" = ${scope.accountId} AND k."engineVersion" = ${ENGINE_VERSION}::int AND k."imageIds" = i.ids THEN k.keys END
      FROM "PetSearchKeys" k WHERE k."petId" = i.id)`;
  const query = (keys: Prisma.Sql) => Prisma.sql`
    WITH batch AS (
      SELECT p.id FROM "Pet" p
      WHERE ${inGallery(scope)} AND p.id > ${after}
      ORDER BY p.id
      LIMIT ${limit}
    ), images AS (
      SELECT b.id, array_agg(f.id ORDER BY f."createdAt", f.id) AS ids, bool_and(f."engineVersion" IS NOT DISTINCT FROM ${ENGINE_VERSION}::int) AS current
      FROM batch b JOIN "FingerprintImage" f ON f."petId" = b.id AND f."accountId" = ${scope.accountId} AND f.usable
      GROUP BY b.id
    )
    SELECT i.id AS "petId", ${keys} AS keys
    FROM images i
    ORDER BY i.id`;
  const reader = binaryRows(db);
  const rows = reader
    ? ((await reader.query(query(entry))) as unknown as PackedRow[])
    : await db.$queryRaw<PackedRow[]>(query(Prisma.sql`encode(${entry}, 'base64')`));
  if (rows.length === 0) return null;
  const stale = rows.filter((row) => row.keys === null).map((row) => row.petId);
  const refreshed = stale.length > 0 ? await enrolledSearchKeysByPet(db, scope.accountId, stale) : new Map<string, Uint8Array[]>();
  if (stale.length > 0) await rewriteEntries(db, scope.accountId, stale);
  // One buffer for each engine shard's pets of the batch (base64 holds 3 bytes in 4 characters), rather than one a pet.
  const bytes = (keys: PackedRow["keys"]) => (typeof keys === "string" ? (keys.length * 3) / 4 : (keys?.length ?? 0));
  const writer = galleryBatchWriter(rows.map((row) => ({ petId: row.petId, bytes: bytes(row.keys) })));
  for (const row of rows) {
    if (row.keys === null) writer.add(row.petId, refreshed.get(row.petId) ?? []);
    else writer.addPacked(row.petId, row.keys);
  }
  return { last: rows[rows.length - 1].petId, pets: writer.finish() };
}

/**
 * Writes stale pets' entries again for the next load. This load has their keys already, so a failure (a pet deleted
 * meanwhile, whose entry's foreign key then fails) is logged, not thrown: the next load finds the entry stale again.
 */
async function rewriteEntries(db: Db, accountId: string, petIds: string[]): Promise<void> {
  try {
    await writePetSearchKeys(db, accountId, petIds);
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    logError("gallery-entries-not-written", error, { accountId, pets: petIds.length });
  }
}
