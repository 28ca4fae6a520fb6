import { describe, expect, it } from "vitest";
import { runCascade, type CascadeStages } from "./cascade";
import { DESCRIPTOR_SETS, MATCHED_SETS, RERANK_CANDIDATES, RERANK_PROMOTED, SHORTLIST_SIZE } from "./parameters";

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `pet-${String(from + i).padStart(3, "0")}`);

/** Stages over a made-up gallery: the first stage ranks pets by number, `accepted` pass the full matcher, `light` gives light raws. */
function stages(accepted: Record<string, number>, light: (petId: string) => number) {
  const calls: string[] = [];
  const fake: CascadeStages = {
    shortlist: async (limit, sets) => {
      calls.push(`shortlist ${limit} ${sets}`);
      return { petIds: ids(0, limit), scores: ids(0, limit).map((_, i) => limit - i), searched: 1000 };
    },
    rank: async (petIds) => {
      calls.push(`rank ${petIds.length}`);
      const candidates = petIds.filter((id) => id in accepted).map((petId) => ({ petId, score: accepted[petId] }));
      return { candidates, compared: petIds.length, bestRaw: candidates.length > 0 ? 9 : 1 };
    },
    compareLightly: async (petIds) => {
      calls.push(`light ${petIds.length}`);
      return petIds.map((petId) => ({ petId, raw: light(petId) }));
    },
  };
  return { fake, calls };
}

describe("the 1:N cascade", () => {
  it("ends after the fast pass when its full matching accepts a pet", async () => {
    const { fake, calls } = stages({ "pet-003": 55 }, () => 0);
    const outcome = await runCascade(fake);
    expect(calls).toEqual([`shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`, `rank ${SHORTLIST_SIZE}`]);
    expect(outcome).toEqual({ candidates: [{ petId: "pet-003", score: 55 }], details: { searched: 1000, shortlisted: SHORTLIST_SIZE, reranked: 0, compared: SHORTLIST_SIZE, bestRaw: 9 } });
  });

  it("otherwise compares the deep first stage's other pets lightly and the best of them in full", async () => {
    const { fake, calls } = stages({ "pet-300": 48 }, (petId) => (petId === "pet-300" ? 5 : 1));
    const outcome = await runCascade(fake);
    const rest = RERANK_CANDIDATES - SHORTLIST_SIZE;
    expect(calls).toEqual([`shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`, `rank ${SHORTLIST_SIZE}`, `shortlist ${RERANK_CANDIDATES} ${DESCRIPTOR_SETS}`, `light ${rest}`, `rank ${RERANK_PROMOTED}`]);
    expect(outcome.candidates).toEqual([{ petId: "pet-300", score: 48 }]);
    expect(outcome.details).toEqual({ searched: 1000, shortlisted: RERANK_CANDIDATES, reranked: rest, compared: SHORTLIST_SIZE + RERANK_PROMOTED, bestRaw: 9 });
  });

  it("matches nobody more in full when the light comparison found nothing", async () => {
    const { fake, calls } = stages({}, () => 0);
    const outcome = await runCascade(fake);
    expect(calls.at(-1)).toBe("rank 0");
    expect(outcome).toEqual({ candidates: [], details: { searched: 1000, shortlisted: RERANK_CANDIDATES, reranked: RERANK_CANDIDATES - SHORTLIST_SIZE, compared: SHORTLIST_SIZE, bestRaw: 1 } });
  });
});
