import { describe, expect, it } from "vitest";
import { petsToCompare } from "./candidates";
import { RERANK_PROMOTED, SHORTLIST_SIZE } from "./parameters";

describe("petsToCompare", () => {
  const ranked = Array.from({ length: SHORTLIST_SIZE + 10 }, (_, i) => `pet-${String(i).padStart(2, "0")}`);

  it("keeps the first stage's best and promotes the best of the rest by light similarity", () => {
    const rest = ranked.slice(SHORTLIST_SIZE);
    // The light similarity rises towards the end of the first stage's order: the last ones are promoted.
    const light = rest.map((petId, i) => ({ petId, raw: i }));
    const compared = petsToCompare(ranked, light);
    expect(compared.slice(0, SHORTLIST_SIZE)).toEqual(ranked.slice(0, SHORTLIST_SIZE));
    expect(compared.slice(SHORTLIST_SIZE)).toEqual(rest.slice(-RERANK_PROMOTED).reverse());
  });

  it("promotes no pet the light comparison found nothing in, and breaks ties by pet id", () => {
    const light = [
      { petId: ranked[SHORTLIST_SIZE + 3], raw: 2 },
      { petId: ranked[SHORTLIST_SIZE + 1], raw: 2 },
      { petId: ranked[SHORTLIST_SIZE], raw: 0 },
      // A pet already in the first stage's best is not compared twice.
      { petId: ranked[0], raw: 9 },
    ];
    expect(petsToCompare(ranked, light)).toEqual([...ranked.slice(0, SHORTLIST_SIZE), ranked[SHORTLIST_SIZE + 1], ranked[SHORTLIST_SIZE + 3]]);
  });

  it("compares a short first-stage list as it is", () => {
    expect(petsToCompare(ranked.slice(0, 3), [])).toEqual(ranked.slice(0, 3));
  });
});
