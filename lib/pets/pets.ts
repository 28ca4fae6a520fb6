import type { Db } from "@/lib/db/connect";
import type { Prisma, Species } from "@/lib/generated/prisma/client";
import { DomainError } from "@/lib/domain-errors";
import { recordGalleryChanges } from "@/lib/galleries/gallery-changes";
import { removeImageFiles } from "@/lib/storage/images";
import type { PetView } from "./schemas";

/** The Pet columns a view reads (with the account that owns it); the pet-view trigger watches these. */
export const petViewSelect = {
  id: true,
  species: true,
  breed: true,
  metadata: true,
  createdAt: true,
  _count: { select: { fingerprints: true } },
} as const;

/** A Pet row as the API's view of it reads it. */
type PetViewRow = Prisma.PetGetPayload<{ select: typeof petViewSelect }>;

function toPetView(row: PetViewRow): PetView {
  return {
    id: row.id,
    species: row.species,
    breed: row.breed,
    metadata: row.metadata,
    hasFingerprint: row._count.fingerprints > 0,
    createdAt: row.createdAt.toISOString(),
  };
}

export async function createPet(
  db: Db,
  accountId: string,
  input: { species: Species; breed?: string; metadata?: string },
  petLimit: number | null,
): Promise<{ id: string }> {
  return db.$transaction(async (tx) => {
    if (petLimit !== null) {
      // Lock the account row so that concurrent creates cannot both pass the count.
      await tx.$executeRaw`SELECT 1 FROM "Account" WHERE id = ${accountId} FOR UPDATE`;
      const count = await tx.pet.count({ where: { accountId } });
      if (count >= petLimit) throw new DomainError("PetLimitReached");
    }
    const pet = await tx.pet.create({
      data: { accountId, species: input.species, breed: input.breed ?? null, metadata: input.metadata ?? null },
      select: { id: true },
    });
    return pet;
  });
}

/**
 * Pets read per query when listing. An account may hold thousands of pets with 16 KB of metadata
 * each (tens of MB); read at once, the rows (PGlite runs in this thread) and their conversion would
 * hold the event loop for the whole list. Read in pages, each is a short slice of work, and other
 * requests are served between pages.
 */
export const LIST_PAGE_SIZE = 100;

/**
 * Every pet of the account, oldest first (ties by id), unpaginated on the wire (the contract's data is a
 * plain array) but read in pages of `pageSize` read one after the
 * other (keyset on createdAt and id), yielding to other work between pages. A pet created while the
 * pages are read appears at the end or not at all; one deleted may still appear.
 */
export async function* listPetPages(db: Db, accountId: string, pageSize = LIST_PAGE_SIZE): AsyncGenerator<PetView[]> {
  let after: { createdAt: Date; id: string } | undefined;
  for (;;) {
    const rows = await db.pet.findMany({
      where: after ? { accountId, OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : { accountId },
      select: petViewSelect,
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: pageSize,
    });
    if (rows.length > 0) yield rows.map(toPetView);
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1];
    after = { createdAt: last.createdAt, id: last.id };
    await new Promise((resolve) => setImmediate(resolve));
  }
}


/**
 * The pet as the API shows it, or null. It depends on the Pet row and on whether any fingerprint image
 * is enrolled to it: pet-view-cache.ts keeps it in memory, invalidated by triggers on both tables.
 */
export async function findPetView(db: Db, accountId: string, petId: string): Promise<PetView | null> {
  const row = await db.pet.findFirst({ where: { id: petId, accountId }, select: petViewSelect });
  return row && toPetView(row);
}

export async function getPetOrThrow(db: Db, accountId: string, petId: string): Promise<PetView> {
  const view = await findPetView(db, accountId, petId);
  if (!view) throw new DomainError("PetNotFound");
  return view;
}

export async function updatePet(db: Db, accountId: string, petId: string, input: { metadata: string; breed?: string }): Promise<void> {
  const { count } = await db.pet.updateMany({
    where: { id: petId, accountId },
    data: { metadata: input.metadata, ...(input.breed !== undefined ? { breed: input.breed } : {}) },
  });
  if (count === 0) throw new DomainError("PetNotFound");
}

/**
 * Deletes the pet with its capture sessions, enrolled fingerprints (and templates), appearance images,
 * jobs, and the image files. Rows go first, in one transaction; files after, so a crash in between
 * leaves orphan files (harmless, invisible) rather than rows pointing at missing files.
 */
export async function deletePet(db: Db, accountId: string, petId: string): Promise<void> {
  const files = await db.$transaction(async (tx) => {
    // Pet first, then its sessions: the order job starts take them in, so the two cannot deadlock.
    // A concurrent deletion of the same pet waits here and then finds no row (20000). With the
    // sessions locked, an upload in flight either committed (its file is listed below) or waits,
    // then finds its session gone and removes its own file.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM "Pet" WHERE id = ${petId} AND "accountId" = ${accountId} FOR UPDATE`;
    if (locked.length === 0) throw new DomainError("PetNotFound");
    await tx.$executeRaw`SELECT 1 FROM "CaptureSession" WHERE "petId" = ${petId} FOR UPDATE`;
    // Every process's galleries drop the pet before their next identification.
    await recordGalleryChanges(tx, accountId, [petId]);
    const owned = { accountId, OR: [{ petId }, { session: { petId } }] };
    const [fingerprints, appearances] = await Promise.all([
      tx.fingerprintImage.findMany({ where: owned, select: { filePath: true } }),
      tx.appearanceImage.findMany({ where: owned, select: { filePath: true } }),
    ]);
    await tx.pet.delete({ where: { id: petId } });
    return [...fingerprints, ...appearances].map((f) => f.filePath);
  });
  await removeImageFiles(files);
}
