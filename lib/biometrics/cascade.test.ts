import { describe, expect, it } from "vitest";
import { rankInTurn, runCascade, turnedPassImages, type CascadeStages } from "./cascade";
import { DEEP_EARLY_LIGHT, DEEP_LIGHT_FIRST, DESCRIPTOR_SETS, FIRST_STAGE_PROMOTED, MATCHED_SETS, RERANK_CANDIDATES, RERANK_PROMOTED, SHORTLIST_SIZE, TURNED_PASS_IMAGES } from "./parameters";

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `pet-${String(from + i).padStart(3, "0")}`);

/**
 * A fast pass whose lightly best pets (pet-001 first) and first-stage best (pet-000) are not accepted: the lightly best
 * and the first stage's best matched first, then the others.
 */
const fastPassAcceptingNobody = [`shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`, `light ${SHORTLIST_SIZE}`, "rank 2", `rank ${RERANK_PROMOTED - 1}`];

/** That fast pass, then the deep pass's first step matching one pet. */
const deepFirstStep = [
  ...fastPassAcceptingNobody,
  `shortlist ${RERANK_CANDIDATES} ${DESCRIPTOR_SETS}`,
  `light ${DEEP_LIGHT_FIRST}`,
  "rank 1",
];

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
  it("ends after the fast pass when the full matching of its lightly best pets accepts one", async () => {
    const { fake, calls } = stages({ "pet-003": 55 }, (petId) => (petId === "pet-003" ? 7 : 1));
    const outcome = await runCascade(fake);
    expect(calls).toEqual([`shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`, `light ${SHORTLIST_SIZE}`, "rank 2"]);
    expect(outcome).toEqual({ candidates: [{ petId: "pet-003", score: 55 }], details: { searched: 1000, shortlisted: SHORTLIST_SIZE, reranked: SHORTLIST_SIZE, compared: 2, bestRaw: 9 } });
  });

  it("matches in full only the fast pass's pets the light comparison ranks best, and the first stage's best, those two first", async () => {
    // The first stage ranks pet-000 first; the light comparison last (raw 0) and pet-015 first.
    const byNumber = (petId: string) => Number(petId.slice(4));
    const matched = async (accepted: Record<string, number>) => {
      const ranked: string[][] = [];
      const { fake } = stages(accepted, byNumber);
      const rank = fake.rank;
      fake.rank = async (petIds) => (ranked.push(petIds), rank(petIds));
      return { ranked, outcome: await runCascade(fake) };
    };
    expect(FIRST_STAGE_PROMOTED).toBe(1);
    const lightlyBest = ids(SHORTLIST_SIZE - RERANK_PROMOTED, SHORTLIST_SIZE).reverse();
    const found = await matched({ "pet-012": 61 });
    expect(found.ranked).toEqual([[lightlyBest[0], "pet-000"], lightlyBest.slice(1)]);
    expect(found.outcome.candidates).toEqual([{ petId: "pet-012", score: 61 }]);
    // The first stage's best accepted ends the pass before the lightly second to fourth are matched.
    const first = await matched({ "pet-012": 61, "pet-000": 50 });
    expect(first.ranked).toEqual([[lightlyBest[0], "pet-000"]]);
    expect(first.outcome.candidates).toEqual([{ petId: "pet-000", score: 50 }]);
  });

  it("hands the fast pass's two batches to the stages' batch matching when they have one", async () => {
    const batches: string[][][] = [];
    const { fake, calls } = stages({ "pet-015": 70 }, (petId) => Number(petId.slice(4)));
    fake.rankBatches = async (given) => (batches.push(given), rankInTurn(given, fake.rank));
    const outcome = await runCascade(fake);
    expect(batches).toEqual([[["pet-015", "pet-000"], ["pet-014", "pet-013", "pet-012"]]]);
    expect(calls).toEqual([`shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`, `light ${SHORTLIST_SIZE}`, "rank 2"]);
    expect(outcome.candidates).toEqual([{ petId: "pet-015", score: 70 }]);
  });

  it("matches at once, before the deep first stage, the fast pass's lightly compared pets that look like the pet", async () => {
    // pet-005 is lightly fifth in the fast pass (not matched there), above DEEP_EARLY_LIGHT: it ends the search.
    const light = (petId: string) => (petId === "pet-005" ? DEEP_EARLY_LIGHT : ["pet-001", "pet-002", "pet-003", "pet-004"].includes(petId) ? 6 : 1);
    const { fake, calls } = stages({ "pet-005": 44 }, light);
    const outcome = await runCascade(fake);
    expect(calls).toEqual([...fastPassAcceptingNobody, "rank 1"]);
    expect(outcome).toEqual({
      candidates: [{ petId: "pet-005", score: 44 }],
      details: { searched: 1000, shortlisted: SHORTLIST_SIZE, reranked: SHORTLIST_SIZE, compared: RERANK_PROMOTED + 2, bestRaw: 9 },
    });
  });

  it("compares the deep first stage's first candidates lightly first, and matches at once those that look like the pet", async () => {
    const light = (petId: string) => (petId === "pet-040" ? 5 : ["pet-001", "pet-002", "pet-003", "pet-004"].includes(petId) ? 6 : 1);
    const { fake, calls } = stages({ "pet-040": 51, "pet-300": 60 }, light);
    const outcome = await runCascade(fake);
    expect(calls).toEqual([
      ...deepFirstStep,
    ]);
    expect(outcome).toEqual({
      candidates: [{ petId: "pet-040", score: 51 }],
      details: { searched: 1000, shortlisted: RERANK_CANDIDATES, reranked: SHORTLIST_SIZE + DEEP_LIGHT_FIRST, compared: RERANK_PROMOTED + 2, bestRaw: 9 },
    });
  });

  it("otherwise compares the other candidates lightly and matches the best of all lightly compared pets in full, less those matched already", async () => {
    const ranked: string[][] = [];
    // pet-030 looks like the pet (matched after the first light step, not accepted); pet-005, lightly fifth in the fast
    // pass and under DEEP_EARLY_LIGHT, and pet-300, best of the rest, are matched at the end with the next best.
    const raws: Record<string, number> = { "pet-001": 6, "pet-002": 6, "pet-003": 6, "pet-004": 6, "pet-300": 5, "pet-030": 3, "pet-005": 1.5 };
    const { fake, calls } = stages({ "pet-300": 48, "pet-005": 44 }, (petId) => raws[petId] ?? 1);
    const rank = fake.rank;
    fake.rank = async (petIds) => (ranked.push(petIds), rank(petIds));
    const outcome = await runCascade(fake);
    const rest = RERANK_CANDIDATES - SHORTLIST_SIZE;
    expect(calls).toEqual([
      ...deepFirstStep,
      `light ${rest - DEEP_LIGHT_FIRST}`,
      `rank ${RERANK_PROMOTED - 1}`,
    ]);
    expect(ranked).toEqual([["pet-001", "pet-000"], ["pet-002", "pet-003", "pet-004"], ["pet-030"], ["pet-300", "pet-005", "pet-006"]]);
    expect(outcome.candidates).toEqual([
      { petId: "pet-300", score: 48 },
      { petId: "pet-005", score: 44 },
    ]);
    expect(outcome.details).toEqual({ searched: 1000, shortlisted: RERANK_CANDIDATES, reranked: RERANK_CANDIDATES, compared: RERANK_PROMOTED + 1 + 1 + RERANK_PROMOTED - 1, bestRaw: 9 });
  });

  it("tells its observer each step as it begins, before the stage it names runs", async () => {
    const { fake, calls } = stages({}, () => 1);
    const turned = stages({}, () => 1);
    // The turned views' stages write to the same list.
    turned.calls.push = (...items: string[]) => calls.push(...items);
    fake.turned = async () => (calls.push("views"), turned.fake);
    fake.observe = (pass, step) => calls.push(`> ${pass} ${step}`);
    await runCascade(fake);
    expect(calls).toEqual([
      "> fast first stage",
      `shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`,
      "> fast light",
      `light ${SHORTLIST_SIZE}`,
      "> fast full",
      // Every light raw is alike: the lightly best is the first stage's best, matched alone first.
      "rank 1",
      `rank ${RERANK_PROMOTED - 1}`,
      "> deep first stage",
      `shortlist ${RERANK_CANDIDATES} ${DESCRIPTOR_SETS}`,
      "> deep light",
      `light ${DEEP_LIGHT_FIRST}`,
      "> deep light",
      `light ${RERANK_CANDIDATES - SHORTLIST_SIZE - DEEP_LIGHT_FIRST}`,
      "> deep full",
      `rank ${RERANK_PROMOTED}`,
      "> turned views",
      "views",
      "> turned first stage",
      `shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`,
      "> turned light",
      `light ${SHORTLIST_SIZE}`,
      "> turned full",
      "rank 1",
      `rank ${RERANK_PROMOTED - 1}`,
    ]);
  });

  it("matches only the first stage's best in full when the light comparison found nothing", async () => {
    const { fake, calls } = stages({}, () => 0);
    const outcome = await runCascade(fake);
    expect(calls.filter((call) => call.startsWith("rank"))).toEqual(["rank 1", "rank 0"]);
    expect(outcome).toEqual({ candidates: [], details: { searched: 1000, shortlisted: RERANK_CANDIDATES, reranked: RERANK_CANDIDATES, compared: 1, bestRaw: 1 } });
  });

  it("runs the fast pass again on the probe's turned views only when the passes upright accepted nobody", async () => {
    const accepted = stages({ "pet-003": 55 }, (petId) => (petId === "pet-003" ? 7 : 1));
    let made = 0;
    accepted.fake.turned = async () => (made++, null);
    await runCascade(accepted.fake);
    expect(made).toBe(0);

    const { fake, calls } = stages({}, () => 1);
    const upright = (await runCascade(fake)).details;
    calls.length = 0;
    const turned = stages({ "pet-007": 62 }, (petId) => (petId === "pet-007" ? 8 : 1 + Number(petId.slice(4)) / 100));
    fake.turned = async () => (made++, turned.fake);
    const outcome = await runCascade(fake);
    expect(made).toBe(1);
    expect(calls.filter((call) => call.startsWith("shortlist"))).toEqual([`shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`, `shortlist ${RERANK_CANDIDATES} ${DESCRIPTOR_SETS}`]);
    expect(turned.calls).toEqual([`shortlist ${SHORTLIST_SIZE} ${MATCHED_SETS}`, `light ${SHORTLIST_SIZE}`, "rank 2"]);
    expect(outcome.candidates).toEqual([{ petId: "pet-007", score: 62 }]);
    expect(outcome.details).toEqual({
      searched: 1000,
      shortlisted: RERANK_CANDIDATES + SHORTLIST_SIZE,
      reranked: RERANK_CANDIDATES + SHORTLIST_SIZE,
      compared: upright.compared + 2,
      bestRaw: 9,
    });
  });

  it("ends with the upright passes' outcome when the probe cannot be turned", async () => {
    const { fake } = stages({}, () => 1);
    const upright = await runCascade(fake);
    fake.turned = async () => null;
    expect(await runCascade(fake)).toEqual(upright);
  });
});

describe("the turned pass's images", () => {
  it("is the probe's best image by quality (the earlier of equals): TURNED_PASS_IMAGES of them", () => {
    expect(TURNED_PASS_IMAGES).toBe(1);
    expect(turnedPassImages([61, 80, 72], [true, true, true])).toEqual([1]);
    expect(turnedPassImages([90, 40, 72], [true, true, true])).toEqual([0]);
    expect(turnedPassImages([70, 70, 70, 70], [true, true, true, true])).toEqual([0]);
    expect(turnedPassImages([70, 75, 75, 70], [true, true, true, true])).toEqual([1]);
  });

  it("is chosen among the images that can be turned, none when none can", () => {
    expect(turnedPassImages([90, 40, 72], [false, true, true])).toEqual([2]);
    expect(turnedPassImages([90, 40], [false, true])).toEqual([1]);
    expect(turnedPassImages([90, 40, 72], [false, false, true])).toEqual([2]);
    expect(turnedPassImages([90, 40, 72], [false, false, false])).toEqual([]);
  });
});
