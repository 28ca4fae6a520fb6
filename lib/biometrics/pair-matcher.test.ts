import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { renderCapture } from "@/lab/synth/capture";
import { captureSeed, subjectSeed } from "@/lab/synth/dataset";
import { createNoseSubject } from "@/lab/synth/nose-surface";
import { extractNoseImage } from "./extract";
import { RERANK_KEYPOINTS } from "./parameters";
import { compareTemplates, compareTemplatesInDetail, compareUnderHypothesis, ROTATION_HYPOTHESES, WHOLE_FRAME_HYPOTHESES } from "./pair-matcher";
import { strongestKeypoints, type NoseTemplate } from "./template";

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

describe("compareTemplates", () => {
  it("gives each pair the same figures whatever was compared before it, light and full (pinned for a genuine and two impostor pairs)", async () => {
    const full = await Promise.all(
      [[0, 0], [0, 1], [1, 0]].map(async ([subject, capture]) => {
        const seed = subjectSeed(720, subject);
        return templateOf((await renderCapture(createNoseSubject(seed), captureSeed(seed, capture), { difficulty: "real" })).jpeg);
      }),
    );
    const light = full.map((t) => strongestKeypoints(t, RERANK_KEYPOINTS));
    const pairs = [[0, 1], [0, 2], [1, 2]] as const;
    const compare = (a: number, b: number, kind: "light" | "full") =>
      kind === "light" ? compareTemplatesInDetail(light[a], light[b], true, WHOLE_FRAME_HYPOTHESES) : compareTemplatesInDetail(full[a], full[b]);
    // A probe against image after image (its blocks kept in kernel memory, each image laid out anew), light then full...
    const inOrder = (["light", "full"] as const).flatMap((kind) => pairs.map(([a, b]) => compare(a, b, kind)));
    // ...equals each pair alone, the two kinds alternating and in reverse order.
    const alternating = pairs.flatMap(([a, b]) => [compare(a, b, "light"), compare(a, b, "full")]);
    expect(inOrder).toEqual([0, 2, 4, 1, 3, 5].map((k) => alternating[k]));
    // As the matcher compared these pairs before its nearest-neighbour step's bookkeeping moved into the kernel.
    expect(inOrder.map((c) => c.best)).toEqual([
      { tentative: 20, inliers: 16, similarity: 6.3, scale: 0.9844288283671488, rotationDeg: 20 },
      { tentative: 13, inliers: 0, similarity: 0, scale: 0, rotationDeg: 20 },
      { tentative: 13, inliers: 0, similarity: 0, scale: 0, rotationDeg: -40 },
      { tentative: 119, inliers: 103, similarity: 32.8, scale: 0.9702604861540506, rotationDeg: 20 },
      { tentative: 54, inliers: 6, similarity: 1.3, scale: 0.9457108201460922, rotationDeg: 30 },
      { tentative: 52, inliers: 7, similarity: 0.8, scale: 0.7243753237408498, rotationDeg: 0 },
    ]);
    expect(compareTemplates(full[1], full[2])).toEqual(inOrder[5].best);
  }, 60_000);
});
