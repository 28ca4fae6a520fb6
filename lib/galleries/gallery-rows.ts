import type { Db } from "@/lib/db/connect";
import { Prisma } from "@/lib/generated/prisma/client";
import type { Species } from "@/lib/generated/prisma/enums";
import { ENGINE_VERSION, PackedPetsWriter, type PackedPets } from "@/lib/engine";
import { embeddedRows } from "@/lib/db/embedded-rows";
import { enrolledSearchKeysByPet } from "@/lib/jobs/templates";

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
   * The pet's enrolled, usable images' search keys in enrolment order, packed as the engine indexes them (PackedPets:
   * each after its byte length, 4 bytes big-endian): as bytes from the embedded database (read in binary,
   * lib/db/embedded-rows.ts), in base64 from PostgreSQL, whose driver decodes text natively.
   */
  keys: Uint8Array | string | null;
  /** Images without a stored search key of the current engine version. */
  stale: bigint | number;
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
 * The next `limit` pets of a gallery after pet id `after` (by id), each with the search keys of its enrolled, usable
 * images, packed for the engine (`galleryUpsertPets`): one plain SQL query a batch, one row a pet (its keys packed by
 * the database and decoded straight into the batch's buffer), instead of reading the pets and then their image rows
 * through the ORM. A pet whose images lack a current search key (enrolled before registrations wrote them, or by an
 * older engine) is read by enrolledSearchKeysByPet, which cuts and stores them. Resolves null after the last pet.
 */
export async function galleryBatchAfter(db: Db, scope: GalleryScope, after: string, limit: number): Promise<{ last: string; pets: PackedPets } | null> {
  const packed = Prisma.sql`string_agg(int4send(length(f."searchKey")) || f."searchKey", ''::bytea ORDER BY f."createdAt", f.id)`;
  const query = (keys: Prisma.Sql) => Prisma.sql`
    WITH batch AS (
      SELECT p.id FROM "Pet" p
      WHERE ${inGallery(scope)} AND p.id > ${after}
      ORDER BY p.id
      LIMIT ${limit}
    )
    SELECT b.id AS "petId", ${keys} AS keys,
      count(*) FILTER (WHERE f."searchKey" IS NULL OR f."engineVersion" IS DISTINCT FROM ${ENGINE_VERSION}::int) AS stale
    FROM batch b JOIN "FingerprintImage" f ON f."petId" = b.id AND f."accountId" = ${scope.accountId} AND f.usable
    GROUP BY b.id
    ORDER BY b.id`;
  const embedded = embeddedRows(db);
  const rows = embedded
    ? ((await embedded.query(query(packed))) as unknown as PackedRow[])
    : await db.$queryRaw<PackedRow[]>(query(Prisma.sql`encode(${packed}, 'base64')`));
  if (rows.length === 0) return null;
  const stale = rows.filter((row) => Number(row.stale) > 0).map((row) => row.petId);
  const refreshed = stale.length > 0 ? await enrolledSearchKeysByPet(db, scope.accountId, stale) : new Map<string, Uint8Array[]>();
  // One buffer for the batch (base64 holds 3 bytes in 4 characters), rather than one a pet.
  const bytes = (keys: PackedRow["keys"]) => (typeof keys === "string" ? (keys.length * 3) / 4 : (keys?.length ?? 0));
  const writer = new PackedPetsWriter(rows.reduce((sum, row) => sum + bytes(row.keys), 0));
  for (const row of rows) {
    if (Number(row.stale) > 0) writer.add(row.petId, refreshed.get(row.petId) ?? []);
    else writer.addPacked(row.petId, row.keys);
  }
  return { last: rows[rows.length - 1].petId, pets: writer.finish() };
}
