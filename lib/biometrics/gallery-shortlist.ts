/** What a gallery's (or one shard's) first stage returns: the pets worth matching in full, best first. */
export interface GalleryShortlist {
  petIds: string[];
  /** Each shortlisted pet's first-stage score (same order), so that shards' shortlists can be merged. */
  scores: number[];
  /** Pets in the gallery (shard) when it was searched. */
  searched: number;
}

/** The `limit` best of several shards' shortlists, best first (ties by pet id, as within a shard). */
export function mergeShortlists(shards: readonly GalleryShortlist[], limit: number): GalleryShortlist {
  const hits = shards.flatMap((shard) => shard.petIds.map((petId, i) => ({ petId, score: shard.scores[i] })));
  hits.sort((a, b) => b.score - a.score || (a.petId < b.petId ? -1 : a.petId > b.petId ? 1 : 0));
  const best = hits.slice(0, limit);
  return { petIds: best.map((hit) => hit.petId), scores: best.map((hit) => hit.score), searched: shards.reduce((sum, shard) => sum + shard.searched, 0) };
}
