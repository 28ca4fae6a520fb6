import { describe, expect, it } from "vitest";
import { GENERICNESS_MAX } from "./distinctiveness";
import { inlierGenericness, inlierWeight } from "./pair-matcher";
import { GENERICNESS_EXPONENT, GENERICNESS_REFERENCE, MATCH_MIN_COSINE } from "./parameters";
import { sessionRawScore } from "./scoring";

describe("session statistic", () => {
  it("keeps the mean of the two best probe images' best pair similarities", () => {
    expect(sessionRawScore([[1, 3, 0], [0, 2, 1], [7, 0, 0]])).toBe(5);
    // One lucky probe image cannot carry a session alone.
    expect(sessionRawScore([[0, 0], [30, 0], [1, 2]])).toBe(16);
  });

  it("is 0 without probe images", () => {
    expect(sessionRawScore([])).toBe(0);
  });

  it("lands on the 0.05 grid that calibration tables use, whatever the sums' float error", () => {
    expect(sessionRawScore([[0.1 + 0.2], [0.7]])).toBe(0.5);
    expect(sessionRawScore([[12.3], [4.4], [1]])).toBe(8.35);
  });
});

describe("inlier weight", () => {
  it("is 0 at the tentative-match floor and below, 1 for identical descriptors, and grows in between", () => {
    expect(inlierWeight(MATCH_MIN_COSINE)).toBe(0);
    expect(inlierWeight(MATCH_MIN_COSINE - 0.1)).toBe(0);
    expect(inlierWeight(1)).toBeCloseTo(1, 12);
    expect(inlierWeight((1 + MATCH_MIN_COSINE) / 2)).toBeCloseTo(0.25, 12);
    expect(inlierWeight(0.95)).toBeGreaterThan(inlierWeight(0.9));
  });

  it("is discounted for generic keypoints and raised for distinctive ones, 1 at the reference genericness", () => {
    expect(inlierWeight(1, GENERICNESS_REFERENCE)).toBeCloseTo(1, 12);
    expect(inlierWeight(1, 0.8)).toBeCloseTo((0.2 / (1 - GENERICNESS_REFERENCE)) ** GENERICNESS_EXPONENT, 12);
    expect(inlierWeight(0.9, 0.7)).toBeLessThan(inlierWeight(0.9, 0.65));
    expect(inlierWeight(0.9, 0.5)).toBeGreaterThan(inlierWeight(0.9));
    expect(inlierWeight(1, 1)).toBe(0);
  });

  it("takes an inlier to be as generic as its more generic keypoint", () => {
    expect(inlierGenericness(0, GENERICNESS_MAX)).toBe(1);
    expect(inlierGenericness(153, 51)).toBeCloseTo(0.6, 12);
    expect(inlierGenericness(0, 0)).toBe(0);
  });
});
