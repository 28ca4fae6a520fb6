import { describe, expect, it } from "vitest";
import { rawToFmr } from "../scoring";
import { buildCalibrationTable } from "./calibration-builder";

describe("buildCalibrationTable", () => {
  const impostors = [...Array(900).fill(0), ...Array(90).fill(1), ...Array(9).fill(2), 3];
  const table = buildCalibrationTable(impostors, "test");

  it("gives the share of impostors at or above each observed value", () => {
    expect(table.points).toEqual([
      { raw: 0, fmr: 1 },
      { raw: 1, fmr: 0.1 },
      { raw: 2, fmr: 0.01 },
      { raw: 3, fmr: 0.001 },
    ]);
    expect(rawToFmr(2, table)).toBeCloseTo(0.01, 10);
    expect(rawToFmr(1.5, table)).toBeCloseTo(10 ** -1.5, 10);
  });

  it("extrapolates the fitted tail beyond the largest impostor", () => {
    expect(table.tailSlope).toBeCloseTo(-1, 4);
    expect(rawToFmr(5, table)).toBeCloseTo(1e-5, 8);
  });

  it("never extrapolates a flat tail", () => {
    const flat = buildCalibrationTable([0, 0, 0, 5], "test");
    expect(flat.tailSlope).toBeLessThanOrEqual(-0.05);
    expect(rawToFmr(50, flat)).toBeLessThan(rawToFmr(5, flat));
  });
});
