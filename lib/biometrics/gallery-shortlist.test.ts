import { describe, expect, it } from "vitest";
import { mergeShortlists } from "./gallery-shortlist";

describe("mergeShortlists", () => {
  it("keeps the best of every shard's shortlist, best first, and counts every shard's pets", () => {
    const merged = mergeShortlists(
      [
        { petIds: ["a", "b", "c"], scores: [9, 4, 1], searched: 50 },
        { petIds: ["d", "e"], scores: [7, 4], searched: 40 },
        { petIds: [], scores: [], searched: 0 },
      ],
      4,
    );
    expect(merged).toEqual({ petIds: ["a", "d", "b", "e"], scores: [9, 7, 4, 4], searched: 90 });
  });
});
