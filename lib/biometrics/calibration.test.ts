import { describe, expect, it } from "vitest";
import { PAIR_CALIBRATION, SESSION_CALIBRATION } from "./calibration";
import { buildCalibrationTable } from "@/lab/evaluation/calibration-builder";
import { MATCHER_REVISION, PAIR_SCORING_REVISION, TEMPLATE_VERSION } from "./parameters";
import { DECISION_THRESHOLD, fmrToScore, scoreToFmr } from "./scoring";

// The generated calibration (npm run calibrate) belongs to one template version: scores are false-match
// rates only for the templates whose impostors were measured.

describe("the calibration tables", () => {
  it("were measured on today's template version (change TEMPLATE_VERSION, run npm run calibrate)", () => {
    for (const table of [SESSION_CALIBRATION, PAIR_CALIBRATION]) expect(table.templateVersion).toBe(TEMPLATE_VERSION);
  });

  it("were measured with today's matcher (change MATCHER_REVISION, run npm run calibrate)", () => {
    for (const table of [SESSION_CALIBRATION, PAIR_CALIBRATION]) expect(table.matcherRevision).toBe(MATCHER_REVISION);
  });

  it("score single pairs as today's pair scoring does (change PAIR_SCORING_REVISION, run npm run calibrate -- --pairs-only)", () => {
    expect(PAIR_CALIBRATION.pairScoringRevision).toBe(PAIR_SCORING_REVISION);
  });

  it("map higher similarity to a rarer false match, with a falling tail", () => {
    for (const table of [SESSION_CALIBRATION, PAIR_CALIBRATION]) {
      for (let i = 1; i < table.points.length; i++) {
        expect(table.points[i].raw).toBeGreaterThan(table.points[i - 1].raw);
        expect(table.points[i].fmr).toBeLessThanOrEqual(table.points[i - 1].fmr);
      }
      expect(table.tailSlope).toBeLessThan(0);
    }
  });

  it("read as false-match rates: 20 is 1 %, 40 is one in 10,000", () => {
    expect(scoreToFmr(20)).toBeCloseTo(0.01, 10);
    expect(Math.round(1 / scoreToFmr(DECISION_THRESHOLD))).toBe(10_000);
    expect(fmrToScore(scoreToFmr(33.3))).toBeCloseTo(33.3, 10);
  });

  it("are stamped by the builder with the template version and matcher revision they are built under", () => {
    const table = buildCalibrationTable([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], "test");
    expect(table).toMatchObject({ templateVersion: TEMPLATE_VERSION, matcherRevision: MATCHER_REVISION });
  });
});
