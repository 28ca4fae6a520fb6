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
  it(`accepts a ${MIN_INPUT_SIDE + 8} px crop that carries identity and matches it to the same nose's later captures, not a stranger's`, async () => {
    let matched = 0;
    let strangerBest = 0;
    for (const subject of [0, 1, 2]) {
      const small = await sharp(await realCapture(subject, 0)).resize(MIN_INPUT_SIDE + 8, MIN_INPUT_SIDE + 8).jpeg({ quality: 90 }).toBuffer();
      const probe = await templateOf(small);
      if (!probe) continue;
      // Against a pet's later captures (5-7, as a pet is enrolled with several): its best image decides, as in a session.
      const bestAgainst = async (of: number) => {
        let best = 0;
        for (const capture of [5, 6, 7]) {
          const enrolled = await templateOf(await realCapture(of, capture));
          if (enrolled) best = Math.max(best, pairScore(compareTemplates(probe, enrolled).similarity));
        }
        return best;
      };
      if ((await bestAgainst(subject)) >= DECISION_THRESHOLD) matched++;
      strangerBest = Math.max(strangerBest, await bestAgainst(subject + 3));
    }
    expect(matched).toBeGreaterThanOrEqual(2);
    expect(strangerBest).toBeLessThan(DECISION_THRESHOLD);
  }, 120_000);
});
