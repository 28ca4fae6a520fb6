import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { renderCapture } from "../synth/capture";
import { captureSeed, subjectSeed } from "../synth/dataset";
import { createNoseSubject } from "../synth/nose-surface";
import { extractNoseImage } from "./extract";
import { compareInFrame, compareTemplates } from "./pair-matcher";
import { DESCRIPTOR_ANGLES_DEG } from "./parameters";
import type { NoseTemplate } from "./template";

async function templateOf(jpeg: Buffer): Promise<NoseTemplate> {
  const result = await extractNoseImage(jpeg);
  if (!result.ok || !result.template) throw new Error("capture was not usable");
  return result.template;
}

describe("rotation hypotheses", () => {
  it("find a turned copy of an image under the hypothesis of its turn, with far more inliers than upright", async () => {
    const seed = subjectSeed(4242, 0);
    const jpeg = (await renderCapture(createNoseSubject(seed), captureSeed(seed, 0), { difficulty: "normal" })).jpeg;
    const original = await templateOf(jpeg);
    for (const turn of [20, -20]) {
      // sharp turns clockwise on screen for a positive angle: in image coordinates (y down) that is +turn.
      const turned = await templateOf(await sharp(jpeg).rotate(turn, { background: "#000" }).jpeg({ quality: 95 }).toBuffer());
      const best = compareTemplates(original, turned);
      expect(best.rotationDeg).toBe(turn);
      const upright = compareInFrame(original, 0, turned);
      expect(upright.rotationDeg).toBe(0);
      expect(best.inliers).toBeGreaterThan(2 * upright.inliers);
      expect(best).toEqual(compareInFrame(original, DESCRIPTOR_ANGLES_DEG.indexOf(-turn), turned));
    }
  }, 60_000);
});
