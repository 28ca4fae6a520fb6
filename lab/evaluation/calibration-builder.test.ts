import { describe, expect, it } from "vitest";
import { rawToFmr } from "@/lib/biometrics/scoring";
import { buildCalibrationTable, combineCalibrationTables } from "./calibration-builder";

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

describe("combineCalibrationTables", () => {
  // A setting whose impostors reach higher (normal photos' shared outline) and one whose tail is lower.
  const high = buildCalibrationTable([...Array(90).fill(0), ...Array(9).fill(2), 4], "high");
  const low = buildCalibrationTable([...Array(900).fill(0), ...Array(90).fill(1), ...Array(9).fill(2), 3], "low");
  const both = combineCalibrationTables([high, low], "both");

  it("keeps, at every raw similarity, the larger of the settings' false-match rates", () => {
    for (const raw of [0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 6]) {
      expect(rawToFmr(raw, both)).toBeCloseTo(Math.max(rawToFmr(raw, high), rawToFmr(raw, low)), 10);
    }
    expect(rawToFmr(3, both)).toBeGreaterThan(rawToFmr(3, low));
    expect(both.impostorComparisons).toBe(1100);
  });

  it("is non-increasing and extrapolates no lower than either setting would", () => {
    for (let i = 1; i < both.points.length; i++) expect(both.points[i].fmr).toBeLessThanOrEqual(both.points[i - 1].fmr);
    for (const raw of [5, 8, 12]) expect(rawToFmr(raw, both)).toBeGreaterThanOrEqual(Math.max(rawToFmr(raw, high), rawToFmr(raw, low)) * (1 - 1e-9));
  });
});
