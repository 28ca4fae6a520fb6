import { describe, expect, it } from "vitest";
import { explainQualityFailure } from "./failure-advice";
import type { QualityReport } from "./quality";

const figures = { sharpness: 0.02, brightness: 120, glareFraction: 0, shadowFraction: 0, contrast: 30, resolution: 300, keypoints: 20 };
const blurred: QualityReport = { score: 30, usable: false, reasons: ["out of focus or motion-blurred", "too little nose texture visible"], figures };
const glary: QualityReport = { score: 45, usable: false, reasons: ["glare washes out the texture"], figures };
const good: QualityReport = { score: 90, usable: true, reasons: [], figures };

describe("explainQualityFailure", () => {
  it("counts each reason over the unusable images and leads with the most frequent", () => {
    const explanation = explainQualityFailure([blurred, blurred, blurred, glary, good], 3);
    expect(explanation.usable).toBe(1);
    expect(explanation.reasons.map((r) => [r.reason, r.images])).toEqual([
      ["out of focus or motion-blurred", 3],
      ["too little nose texture visible", 3],
      ["glare washes out the texture", 1],
    ]);
    expect(explanation.summary).toBe(
      "out of focus or motion-blurred in 3 of 5 images (1 usable, 3 needed): hold the phone steady, tap to focus on the nose and capture again closer",
    );
  });

  it("asks for more images when every image was fine but too few were sent", () => {
    expect(explainQualityFailure([good, good], 3).summary).toBe("2 of 2 images usable, 3 needed: capture more images of the nose");
  });
});
