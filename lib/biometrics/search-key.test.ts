import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { renderCapture } from "../synth/capture";
import { captureSeed, subjectSeed } from "../synth/dataset";
import { createNoseSubject } from "../synth/nose-surface";
import { extractNoseImage } from "./extract";
import { Gallery } from "./gallery";
import { DESCRIPTOR_ANGLES_DEG, INDEXED_KEYPOINTS, INDEXED_POSTINGS, INDEXED_TURNED_KEYPOINTS } from "./parameters";
import { angleStep, type SearchKey } from "./search-key";
import type { NoseTemplate } from "./template";

async function templateOf(jpeg: Buffer): Promise<NoseTemplate> {
  const result = await extractNoseImage(jpeg);
  if (!result.ok || !result.template) throw new Error("capture was not usable");
  return result.template;
}

/** The key as it was before turned frames were indexed: the upright postings only. */
function uprightOnly(key: SearchKey): SearchKey {
  return { words: key.words.slice(0, INDEXED_KEYPOINTS), signatures: key.signatures.slice(0, 2 * INDEXED_KEYPOINTS), angles: key.angles.slice(0, INDEXED_KEYPOINTS) };
}

describe("search keys", () => {
  it("index the upright frame's strongest keypoints, then each turned frame's, so that a probe turned 40 degrees is found", async () => {
    const jpegs = await Promise.all(
      [0, 1, 2, 3].map(async (s) => {
        const seed = subjectSeed(5151, s);
        return (await renderCapture(createNoseSubject(seed), captureSeed(seed, 0), { difficulty: "normal" })).jpeg;
      }),
    );
    const enrolled = await Promise.all(jpegs.map(templateOf));
    const key = enrolled[0].searchKey;
    expect(key.words.length).toBe(INDEXED_POSTINGS);
    const frameOf = [INDEXED_KEYPOINTS, INDEXED_TURNED_KEYPOINTS, INDEXED_TURNED_KEYPOINTS].flatMap((n, set) => Array<number>(n).fill(set));
    expect([...key.angles]).toEqual(frameOf.map((set) => angleStep((DESCRIPTOR_ANGLES_DEG[set] * Math.PI) / 180)));

    // sharp turns clockwise on screen for a positive angle; the probe's turned frames meet the opposite ones.
    for (const turn of [40, -40]) {
      const probe = await templateOf(await sharp(jpegs[0]).rotate(turn, { background: "#000" }).jpeg({ quality: 95 }).toBuffer());
      const withTurned = new Gallery();
      const uprightGallery = new Gallery();
      enrolled.forEach((t, p) => {
        withTurned.upsert(`pet-${p}`, [t.searchKey]);
        uprightGallery.upsert(`pet-${p}`, [uprightOnly(t.searchKey)]);
      });
      const found = withTurned.shortlist([probe], 4);
      const before = uprightGallery.shortlist([probe], 4);
      withTurned.dispose();
      uprightGallery.dispose();
      expect(found.petIds[0]).toBe("pet-0");
      expect(found.scores[0]).toBeGreaterThan(2 * (found.scores[1] ?? 0));
      const scoreBefore = before.scores[before.petIds.indexOf("pet-0")] ?? 0;
      // Upright postings alone gave the true pet 27 and 45 here (the others up to 23), the turned ones 143 and 111.
      expect(found.scores[0]).toBeGreaterThan(2 * scoreBefore);
    }
  }, 60_000);
});
