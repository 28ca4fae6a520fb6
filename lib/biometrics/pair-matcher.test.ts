import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { renderCapture } from "@/lab/synth/capture";
import { captureSeed, subjectSeed } from "@/lab/synth/dataset";
import { createNoseSubject } from "@/lab/synth/nose-surface";
import { extractNoseImage } from "./extract";
import { compareTemplates, compareUnderHypothesis, ROTATION_HYPOTHESES, WHOLE_FRAME_HYPOTHESES } from "./pair-matcher";
import type { NoseTemplate } from "./template";

async function templateOf(jpeg: Buffer): Promise<NoseTemplate> {
  const result = await extractNoseImage(jpeg);
  if (!result.ok || !result.template) throw new Error("capture was not usable");
  return result.template;
}

describe("rotation hypotheses", () => {
  it("find a turned copy of an image under the hypothesis of its turn, with far more inliers than upright, to ± 40 degrees in steps of 10", async () => {
    expect(ROTATION_HYPOTHESES.map((h) => h.rotationDeg)).toEqual([0, 20, -20, -40, 40, 10, -10, 30, -30]);
    const seed = subjectSeed(4242, 0);
    const jpeg = (await renderCapture(createNoseSubject(seed), captureSeed(seed, 0), { difficulty: "normal" })).jpeg;
    const original = await templateOf(jpeg);
    for (const turn of [20, -20, 40, -40, 10, -30]) {
      // sharp turns clockwise on screen for a positive angle: in image coordinates (y down) that is +turn.
      const turned = await templateOf(await sharp(jpeg).rotate(turn, { background: "#000" }).jpeg({ quality: 95 }).toBuffer());
      const best = compareTemplates(original, turned);
      expect(best.rotationDeg).toBe(turn);
      const upright = compareUnderHypothesis(original, turned, 0);
      expect(upright.rotationDeg).toBe(0);
      if (turn % 20 === 0) expect(best.inliers).toBeGreaterThan(2 * upright.inliers);
      else {
        // Halfway between two frames (decision 0022): more than under either frame's own hypothesis.
        const whole = [turn - 10, turn + 10].map((angle) => compareUnderHypothesis(original, turned, ROTATION_HYPOTHESES.findIndex((h) => h.rotationDeg === angle)).inliers);
        expect(best.inliers).toBeGreaterThan(Math.max(...whole));
        // The light comparison's whole frames alone (WHOLE_FRAME_HYPOTHESES) stop short of it.
        expect(compareTemplates(original, turned, WHOLE_FRAME_HYPOTHESES).inliers).toBe(Math.max(...whole));
      }
      expect(best).toEqual(compareUnderHypothesis(original, turned, ROTATION_HYPOTHESES.findIndex((h) => h.rotationDeg === turn)));
    }
  }, 60_000);
});
