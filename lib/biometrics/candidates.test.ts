import { describe, expect, it } from "vitest";
import { promoteByLightScore, rerankNeeded } from "./candidates";
import { RERANK_PROMOTED } from "./parameters";

describe("the cascade's light stage", () => {
  const pets = Array.from({ length: 10 }, (_, i) => `pet-${String(i).padStart(2, "0")}`);

  it("promotes the best pets by light similarity, best first", () => {
    // The light similarity rises along the first stage's order: the last ones are promoted.
    const light = pets.map((petId, i) => ({ petId, raw: i }));
    expect(promoteByLightScore(light)).toEqual(pets.slice(-RERANK_PROMOTED).reverse());
  });

  it("promotes no pet the light comparison found nothing in, and breaks ties by pet id", () => {
    const light = [
      { petId: pets[3], raw: 2 },
      { petId: pets[1], raw: 2 },
      { petId: pets[0], raw: 0 },
    ];
    expect(promoteByLightScore(light)).toEqual([pets[1], pets[3]]);
    expect(promoteByLightScore([])).toEqual([]);
  });

  it("runs only when the full matching of the first stage's best accepted nobody", () => {
    expect(rerankNeeded(0)).toBe(true);
    expect(rerankNeeded(1)).toBe(false);
  });
});
