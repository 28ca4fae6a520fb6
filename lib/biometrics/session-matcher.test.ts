import { describe, expect, it } from "vitest";
import { sessionRawScore } from "./session-matcher";

describe("session statistic", () => {
  it("keeps the mean of the two best probe images' best inlier counts", () => {
    expect(sessionRawScore([[1, 3, 0], [0, 2, 1], [7, 0, 0]])).toBe(5);
    // One lucky probe image cannot carry a session alone.
    expect(sessionRawScore([[0, 0], [30, 0], [1, 2]])).toBe(16);
  });

  it("is 0 without probe images", () => {
    expect(sessionRawScore([])).toBe(0);
  });
});
