import { describe, expect, it } from "vitest";
import { decisionThreshold, jobOutcome, searchedPool } from "./job-outcome";

describe("jobOutcome", () => {
  it("calls a verification that ran but did not verify 'Not verified', not a success", () => {
    expect(jobOutcome({ kind: "VERIFICATION", status: "SUCCESS", result: { isVerified: false, score: 0 } }, 40)).toEqual({ label: "Not verified · score 0.0", tone: "negative" });
    expect(jobOutcome({ kind: "VERIFICATION", status: "SUCCESS", result: { isVerified: true, score: 87.25 } }, 40)).toEqual({ label: "Verified · score 87.3", tone: "positive" });
  });

  it("counts only identification candidates at or above the threshold as matches", () => {
    expect(jobOutcome({ kind: "IDENTIFICATION", status: "SUCCESS", result: { candidates: [{ score: 70 }, { score: 41 }, { score: 12 }] } }, 40).label).toBe("2 matches · best 70.0");
    expect(jobOutcome({ kind: "IDENTIFICATION", status: "SUCCESS", result: { candidates: [{ score: 12 }] } }, 40)).toEqual({ label: "No match (best 12.0, below 40)", tone: "neutral" });
    expect(jobOutcome({ kind: "IDENTIFICATION", status: "SUCCESS", result: { candidates: [] } }, 40).label).toBe("No match");
  });

  it("says why a job failed and that a pending one runs", () => {
    expect(jobOutcome({ kind: "FINGERPRINT_ADDITION", status: "FAILED", result: null, failureReason: { code: "TOO_FEW_USABLE_IMAGES" } }, 40)).toEqual({ label: "Failed: too few usable images", tone: "negative" });
    expect(jobOutcome({ kind: "FINGERPRINT_ADDITION", status: "SUCCESS", result: null }, 40).label).toBe("Registered");
    expect(jobOutcome({ kind: "VERIFICATION", status: "PENDING", result: null }, 40).tone).toBe("running");
  });

  it("reads the searched pool only when the job recorded one", () => {
    expect(searchedPool({ compared: 3, pool: { name: "default", pets: 12 } })).toEqual({ name: "default", pets: 12 });
    expect(searchedPool({ compared: 3 })).toBeNull();
    expect(searchedPool(null)).toBeNull();
  });
});

describe("decisionThreshold", () => {
  it("words the engine's threshold with the odds its calibration gives", async () => {
    const { DECISION_THRESHOLD, scoreToFmr } = await import("@/lib/biometrics/scoring");
    expect(decisionThreshold({ DECISION_THRESHOLD, scoreToFmr })).toEqual({ threshold: 40, thresholdOdds: 10_000 });
    expect(decisionThreshold({ DECISION_THRESHOLD: 30, scoreToFmr: () => 0.001 })).toEqual({ threshold: 30, thresholdOdds: 1_000 });
  });
});
