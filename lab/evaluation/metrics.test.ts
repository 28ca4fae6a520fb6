import { describe, expect, it } from "vitest";
import { areaUnderRoc, computeDet, equalErrorRate, fnmrAtFmr, histogram } from "./metrics";

// Interleaved scores: genuine 0.4 sits below impostors 0.5 and 0.7; genuine 0.6 below 0.7.
const GENUINE = [0.9, 0.8, 0.6, 0.4];
const IMPOSTOR = [0.1, 0.3, 0.5, 0.7];

// Heavy ties, as with inlier-count scores where most impostors score exactly 0.
const TIED_GENUINE = [0, 2, 2, 3];
const TIED_IMPOSTOR = [0, 0, 0, 0, 0, 2];

describe("computeDet", () => {
  it("lists every distinct threshold with accept-when-score>=threshold rates", () => {
    expect(computeDet(GENUINE, IMPOSTOR)).toEqual([
      { threshold: 0.1, fmr: 1, fnmr: 0 },
      { threshold: 0.3, fmr: 0.75, fnmr: 0 },
      { threshold: 0.4, fmr: 0.5, fnmr: 0 },
      { threshold: 0.5, fmr: 0.5, fnmr: 0.25 },
      { threshold: 0.6, fmr: 0.25, fnmr: 0.25 },
      { threshold: 0.7, fmr: 0.25, fnmr: 0.5 },
      { threshold: 0.8, fmr: 0, fnmr: 0.5 },
      { threshold: 0.9, fmr: 0, fnmr: 0.75 },
      { threshold: Infinity, fmr: 0, fnmr: 1 },
    ]);
  });

  it("collapses tied scores into one threshold", () => {
    expect(computeDet(TIED_GENUINE, TIED_IMPOSTOR)).toEqual([
      { threshold: 0, fmr: 1, fnmr: 0 },
      { threshold: 2, fmr: 1 / 6, fnmr: 0.25 },
      { threshold: 3, fmr: 0, fnmr: 0.75 },
      { threshold: Infinity, fmr: 0, fnmr: 1 },
    ]);
  });

  it("does not depend on input order", () => {
    expect(computeDet([...GENUINE].reverse(), [...IMPOSTOR].reverse())).toEqual(computeDet(GENUINE, IMPOSTOR));
  });

  it("rejects empty and non-finite inputs", () => {
    expect(() => computeDet([], [1])).toThrow(/genuine/);
    expect(() => computeDet([1], [])).toThrow(/impostor/);
    expect(() => computeDet([NaN], [1])).toThrow(/finite/);
    expect(() => computeDet([1], [Infinity])).toThrow(/finite/);
  });
});

describe("equalErrorRate", () => {
  it("returns the exact crossing when it falls on an operating point", () => {
    expect(equalErrorRate(GENUINE, IMPOSTOR)).toEqual({ eer: 0.25, lowerThreshold: 0.6, upperThreshold: 0.6 });
  });

  it("interpolates between the bracketing operating points under ties", () => {
    // Between (FMR 1, FNMR 0) at t=0 and (1/6, 1/4) at t=2 the segment crosses FMR = FNMR at 3/13.
    const result = equalErrorRate(TIED_GENUINE, TIED_IMPOSTOR);
    expect(result.eer).toBeCloseTo(3 / 13, 12);
    expect(result.lowerThreshold).toBe(0);
    expect(result.upperThreshold).toBe(2);
  });

  it("is 0 under perfect separation", () => {
    expect(equalErrorRate([5, 6], [1, 2, 3])).toEqual({ eer: 0, lowerThreshold: 5, upperThreshold: 5 });
  });

  it("is 0.5 under total overlap", () => {
    expect(equalErrorRate([1, 1, 1], [1, 1])).toEqual({ eer: 0.5, lowerThreshold: 1, upperThreshold: Infinity });
  });

  it("is 1 when every impostor outscores every genuine", () => {
    expect(equalErrorRate([0], [1]).eer).toBe(1);
  });
});

describe("fnmrAtFmr", () => {
  it("picks the lowest threshold meeting the FMR target", () => {
    expect(fnmrAtFmr(GENUINE, IMPOSTOR, 0.5)).toEqual({ threshold: 0.4, fmr: 0.5, fnmr: 0 });
    expect(fnmrAtFmr(GENUINE, IMPOSTOR, 0.25)).toEqual({ threshold: 0.6, fmr: 0.25, fnmr: 0.25 });
    expect(fnmrAtFmr(GENUINE, IMPOSTOR, 0.2)).toEqual({ threshold: 0.8, fmr: 0, fnmr: 0.5 });
    expect(fnmrAtFmr(GENUINE, IMPOSTOR, 1)).toEqual({ threshold: 0.1, fmr: 1, fnmr: 0 });
  });

  it("steps over tied impostors", () => {
    expect(fnmrAtFmr(TIED_GENUINE, TIED_IMPOSTOR, 0.2)).toEqual({ threshold: 2, fmr: 1 / 6, fnmr: 0.25 });
    expect(fnmrAtFmr(TIED_GENUINE, TIED_IMPOSTOR, 0.01)).toEqual({ threshold: 3, fmr: 0, fnmr: 0.75 });
  });

  it("reaches FMR 0 without losing genuines under perfect separation", () => {
    expect(fnmrAtFmr([5, 6], [1, 2, 3], 0)).toEqual({ threshold: 5, fmr: 0, fnmr: 0 });
  });

  it("falls back to rejecting everything under total overlap", () => {
    expect(fnmrAtFmr([1, 1, 1], [1, 1], 0.1)).toEqual({ threshold: Infinity, fmr: 0, fnmr: 1 });
  });

  it("rejects a negative or NaN target", () => {
    expect(() => fnmrAtFmr(GENUINE, IMPOSTOR, -0.1)).toThrow(RangeError);
    expect(() => fnmrAtFmr(GENUINE, IMPOSTOR, NaN)).toThrow(RangeError);
  });
});

describe("areaUnderRoc", () => {
  it("counts genuine-over-impostor wins", () => {
    // 0.9 and 0.8 beat all 4, 0.6 beats 3, 0.4 beats 2: 13 of 16 pairs.
    expect(areaUnderRoc(GENUINE, IMPOSTOR)).toBe(13 / 16);
  });

  it("counts ties as half a win", () => {
    // g=0: 5 ties -> 2.5; g=2 (twice): 5 wins + 1 tie -> 5.5 each; g=3: 6 wins. 19.5 of 24.
    expect(areaUnderRoc(TIED_GENUINE, TIED_IMPOSTOR)).toBe(19.5 / 24);
  });

  it("is 1 under perfect separation, 0.5 under total overlap, 0 when inverted", () => {
    expect(areaUnderRoc([5, 6], [1, 2, 3])).toBe(1);
    expect(areaUnderRoc([1, 1, 1], [1, 1])).toBe(0.5);
    expect(areaUnderRoc([0], [1, 2])).toBe(0);
  });

  it("handles a million impostors", () => {
    const n = 1_000_000;
    const impostor = Array.from({ length: n }, (_, i) => i / n);
    const genuine = [0.5, 0.5, 2];
    const started = performance.now();
    const auc = areaUnderRoc(genuine, impostor);
    const elapsedMs = performance.now() - started;
    // Each 0.5 beats 500000 impostors and ties one; 2 beats all.
    expect(auc).toBeCloseTo((2 * (500_000 + 0.5) + n) / (3 * n), 12);
    expect(elapsedMs).toBeLessThan(5_000);
  });
});

describe("histogram", () => {
  it("bins half-open intervals, keeps max in the last bin and reports out-of-range scores", () => {
    expect(histogram([0, 0.5, 0.7, 1, 1.5, 2, -1, 2.5], { min: 0, max: 2, bins: 4 })).toEqual({
      edges: [0, 0.5, 1, 1.5, 2],
      counts: [1, 2, 1, 2],
      underflow: 1,
      overflow: 1,
    });
  });

  it("rejects bad options", () => {
    expect(() => histogram([1], { min: 0, max: 1, bins: 0 })).toThrow(RangeError);
    expect(() => histogram([1], { min: 1, max: 1, bins: 2 })).toThrow(RangeError);
    expect(() => histogram([NaN], { min: 0, max: 1, bins: 2 })).toThrow(RangeError);
  });
});
