import type { Db } from "@/lib/db/connect";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

/** First half of the advisory-lock key: this lock's namespace (the second half is the account). */
const GALLERY_CHANGE_LOCK = 0x6a11;

/**
 * Records that these pets' place in the account's 1:N galleries may have changed, inside the
 * transaction that changes them (so the record commits with the change, or not at all). Call it
 * before the transaction's other writes: the per-account lock it takes orders the rows' ids by
 * commit, and taking it first keeps the lock order the same in every transaction.
 */
export async function recordGalleryChanges(tx: Tx, accountId: string, petIds: string[]): Promise<void> {
  if (petIds.length === 0) return;
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${GALLERY_CHANGE_LOCK}::int, hashtext(${accountId}))`;
  await tx.galleryChange.createMany({ data: petIds.map((petId) => ({ accountId, petId })) });
}
