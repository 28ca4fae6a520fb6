import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { realNoseCapture } from "@/lab/test-support/nose-images";
import { extractNoseImage } from "./extract";
import { compareTemplates } from "./pair-matcher";
import { MIN_INPUT_SIDE } from "./parameters";
import { DECISION_THRESHOLD, pairScore } from "./scoring";
import type { NoseTemplate } from "./template";

/** A capture of the reality-matched setting, dataset seed 9002 (no other test or set uses it). */
const realCapture = (subjectIndex: number, captureIndex: number) => realNoseCapture(9002, subjectIndex, captureIndex);

async function templateOf(jpeg: Buffer): Promise<NoseTemplate | null> {
  const result = await extractNoseImage(jpeg);
  if (!result.ok) throw new Error(`refused: ${result.rejection.code}`);
  return result.template;
}

describe("small crops (real detector crops reach ~70 px on the short side)", () => {
  it(`accepts a ${MIN_INPUT_SIDE + 8} px crop that carries identity and matches it to another capture of the same nose`, async () => {
    let matched = 0;
    let strangerBest = 0;
    for (const subject of [0, 1, 2]) {
      const small = await sharp(await realCapture(subject, 0)).resize(MIN_INPUT_SIDE + 8, MIN_INPUT_SIDE + 8).jpeg({ quality: 90 }).toBuffer();
      const probe = await templateOf(small);
      const same = await templateOf(await realCapture(subject, 5));
      const stranger = await templateOf(await realCapture(subject + 3, 5));
      if (!probe || !same || !stranger) continue;
      if (pairScore(compareTemplates(probe, same).similarity) >= DECISION_THRESHOLD) matched++;
      strangerBest = Math.max(strangerBest, pairScore(compareTemplates(probe, stranger).similarity));
    }
    expect(matched).toBeGreaterThanOrEqual(2);
    expect(strangerBest).toBeLessThan(DECISION_THRESHOLD);
  }, 120_000);
});
