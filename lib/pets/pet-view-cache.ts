import { DomainError } from "@/lib/domain-errors";
import { JsonText } from "@/lib/json-text";
import type { Db } from "@/lib/db";
import { listeningCache, type NotifiedCache } from "@/lib/db/notified-cache";
import { findPetView } from "./pets";
import type { PetView } from "./schemas";
import { processWide } from "@/lib/process-state";

// GET /v2/pets/{petId} answered from this process's memory: one database read per call capped reads
// far below the goal (docs/benchmarks.md). The rules are those of every notified cache
// (lib/db/notified-cache.ts); what is particular to pet views:
// - A view depends on the Pet row and on whether any fingerprint image is enrolled to the pet. Triggers
//   on both tables (prisma/migrations/*_pet_view_change_notifications) NOTIFY PET_VIEW_CHANGE_CHANNEL
//   with the pet's id at commit, whoever writes: the API, the dashboard, a job worker enrolling
//   images, the ops CLI, SQL; a TRUNCATE notifies PET_VIEW_FLUSH. Creating a pet notifies nothing:
//   a miss is never cached. The Pet trigger names the columns it watches: pet-view-cache.test.ts fails
//   when Pet has a column that is neither watched nor listed there as one no view shows.
// - Writes the API acknowledges (PATCH, DELETE, and a fingerprint addition seen as SUCCESS) wait for
//   the barrier first (awaitCacheInvalidation), so the next read through any process sees them.
// - Entries are keyed by pet id and hold the owning account: another account's key never gets the
//   view from memory; it reads the database, scoped by its account, and finds nothing (20000).

export const PET_VIEW_CHANGE_CHANNEL = "rhinarium_pet_view_change";
/** The payload that drops every cached view (a change whose pets the trigger cannot name). */
export const PET_VIEW_FLUSH = "*";
/** Backstop age, as for keys. Views kept at most: with metadata at its 16 KiB cap, ~170 MB. */
const CACHE_LIMITS = { ttlMs: 60_000, maxEntries: 10_000 };

export interface CachedPetView {
  accountId: string;
  view: PetView;
  /** The view serialised, made on the first read that answers it (see getPetViewJsonOrThrow). */
  json?: JsonText;
}

/**
 * The pet view through `cache` as JSON text, for GET /v2/pets/{petId}, or PetNotFound (20000 on the wire).
 * Serialised once per cached entry, not on every read (an entry never changes; a change replaces it).
 */
export async function getPetViewJsonOrThrow(cache: NotifiedCache<CachedPetView>, db: Db, accountId: string, petId: string): Promise<JsonText> {
  const cached = await cache.get(
    petId,
    async () => {
      const view = await findPetView(db, accountId, petId);
      return view && { accountId, view };
    },
    (hit) => hit.accountId === accountId,
  );
  if (!cached) throw new DomainError("PetNotFound");
  return jsonOf(cached);
}

/**
 * The same answer when the view is in memory, without a promise (see NotifiedCache.cached: only after
 * nextCheckPhase()), else getPetViewJsonOrThrow's promise. What GET /v2/pets/{petId} answers.
 */
export function readPetViewJson(cache: NotifiedCache<CachedPetView>, db: Db, accountId: string, petId: string): JsonText | Promise<JsonText> {
  const cached = cache.cached(petId, (hit) => hit.accountId === accountId);
  return cached ? jsonOf(cached) : getPetViewJsonOrThrow(cache, db, accountId, petId);
}

function jsonOf(cached: CachedPetView): JsonText {
  return (cached.json ??= new JsonText(JSON.stringify(cached.view)));
}

export function applyPetViewChange(cache: NotifiedCache<CachedPetView>, payload: string): void {
  if (payload === PET_VIEW_FLUSH) cache.clear();
  else cache.invalidate(payload);
}

// One cache per process (lib/process-state.ts), like the database client; it listens on the server's database.
export function serverPetViewCache(): NotifiedCache<CachedPetView> {
  return processWide("petViewCache", () => listeningCache(PET_VIEW_CHANGE_CHANNEL, CACHE_LIMITS, applyPetViewChange));
}
