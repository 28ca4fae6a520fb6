import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { renderCapture } from "@/lab/synth/capture";
import { captureSeed, subjectSeed } from "@/lab/synth/dataset";
import { createNoseSubject } from "@/lab/synth/nose-surface";
import { extractNoseImage } from "./extract";
import { InvertedIndex } from "./inverted-index";
import { descriptorFrame } from "./features";
import {
  DESCRIPTOR_ANGLES_DEG,
  DESCRIPTOR_DIMS,
  INDEXED_KEYPOINTS,
  INDEXED_POSTINGS,
  INDEXED_TURNED_KEYPOINTS,
  MATCHED_SETS,
  PROBE_KEYPOINTS,
  QUERY_WORDS,
  SOFT_IMAGE_QUALITY,
  SOFT_QUERY_WORD_RATIO,
  SOFT_QUERY_WORDS,
} from "./parameters";
import { angleStep, computeProbeLookups, queryWordsFor, type SearchKey } from "./search-key";
import { lookupWords } from "./visual-words";
import { keypointCount, type NoseTemplate } from "./template";

/** A capture's template as a 1:N probe's is extracted, with the outer frames (they look up in them). */
async function templateOf(jpeg: Buffer): Promise<NoseTemplate> {
  const result = await extractNoseImage(jpeg, { outerFrames: true });
  if (!result.ok || !result.template) throw new Error("capture was not usable");
  return result.template;
}

/** The key as it was before turned frames were indexed: the upright postings only. */
function uprightOnly(key: SearchKey): SearchKey {
  return { words: key.words.slice(0, INDEXED_KEYPOINTS), signatures: key.signatures.slice(0, 2 * INDEXED_KEYPOINTS), angles: key.angles.slice(0, INDEXED_KEYPOINTS) };
}

describe("search keys", () => {
  it("index the upright frame's strongest keypoints, then each turned frame's, and a probe looks its outer frames up too, so that a probe turned 40 degrees is found", async () => {
    const jpegs = await Promise.all(
      [0, 1, 2, 3].map(async (s) => {
        const seed = subjectSeed(5151, s);
        return (await renderCapture(createNoseSubject(seed), captureSeed(seed, 0), { difficulty: "normal" })).jpeg;
      }),
    );
    const enrolled = await Promise.all(jpegs.map(templateOf));
    const key = enrolled[0].searchKey;
    // An image with fewer keypoints than a frame's quota indexes all it has (a sharp crop keeps about 200 since format 11).
    const keypoints = keypointCount(enrolled[0]);
    const quotas = [INDEXED_KEYPOINTS, INDEXED_TURNED_KEYPOINTS, INDEXED_TURNED_KEYPOINTS].map((n) => Math.min(n, keypoints));
    expect(key.words.length).toBe(Math.min(INDEXED_POSTINGS, quotas.reduce((a, b) => a + b, 0)));
    expect(quotas[1]).toBe(INDEXED_TURNED_KEYPOINTS);
    const frameOf = quotas.flatMap((n, set) => Array<number>(n).fill(set));
    expect([...key.angles]).toEqual(frameOf.map((set) => angleStep((DESCRIPTOR_ANGLES_DEG[set] * Math.PI) / 180)));

    // sharp turns clockwise on screen for a positive angle. Format 6 reached such a turn with the probe's ± 20° frames
    // against the enrolled turned postings; format 8 also looks the probe's ± 40° frames up against the upright ones.
    for (const turn of [40, -40]) {
      const probe = await templateOf(await sharp(jpegs[0]).rotate(turn, { background: "#000" }).jpeg({ quality: 95 }).toBuffer());
      const count = keypointCount(probe);
      const matchedOnly = computeProbeLookups(count, probe.descriptors, MATCHED_SETS);
      const allFrames = computeProbeLookups(count, probe.descriptors);
      const full = new InvertedIndex();
      const uprightIndex = new InvertedIndex();
      enrolled.forEach((t, p) => {
        full.upsert(`pet-${p}`, [t.searchKey]);
        uprightIndex.upsert(`pet-${p}`, [uprightOnly(t.searchKey)]);
      });
      const scoreOf = (index: InvertedIndex, lookups: typeof allFrames) => {
        const hits = index.search([lookups], 4);
        return { first: hits[0]?.petId, score: hits.find((hit) => hit.petId === "pet-0")?.score ?? 0, runnerUp: hits[1]?.score ?? 0 };
      };
      const found = scoreOf(full, allFrames);
      const upright = scoreOf(uprightIndex, matchedOnly);
      const turnedPostings = scoreOf(full, matchedOnly);
      const outerFrames = scoreOf(uprightIndex, allFrames);
      full.dispose();
      uprightIndex.dispose();
      expect(found.first).toBe("pet-0");
      expect(found.score).toBeGreaterThan(2 * found.runnerUp);
      // Format 5 (upright postings, matched frames) gave the true pet 27 and 45 here, format 6's turned postings 143
      // and 111, format 8's outer probe frames against the upright postings alone 425 and 467.
      expect(turnedPostings.score).toBeGreaterThan(2 * upright.score);
      expect(outerFrames.score).toBeGreaterThan(2 * turnedPostings.score);
    }
  }, 60_000);
});

describe("probe lookups", () => {
  it("look a soft image's keypoints up under their nearest word and the next nearest within the ratio, a sharp image's under their two nearest", async () => {
    const seed = subjectSeed(5151, 0);
    const probe = await templateOf((await renderCapture(createNoseSubject(seed), captureSeed(seed, 5), { difficulty: "normal" })).jpeg);
    const count = keypointCount(probe);
    expect(queryWordsFor(SOFT_IMAGE_QUALITY)).toEqual({ most: QUERY_WORDS, ratio: Infinity });
    const soft = queryWordsFor(SOFT_IMAGE_QUALITY - 1);
    expect(soft).toEqual({ most: SOFT_QUERY_WORDS, ratio: SOFT_QUERY_WORD_RATIO });

    const upright = descriptorFrame(probe.descriptors, count, 0).subarray(0, Math.min(count, PROBE_KEYPOINTS) * DESCRIPTOR_DIMS);
    const nearest = lookupWords(upright, SOFT_QUERY_WORDS);
    const looked = computeProbeLookups(count, probe.descriptors, 1, undefined, 0, soft);
    const perKeypoint = new Map<number, number[]>();
    for (let i = 0; i < looked.count; i++) perKeypoint.set(looked.keypoint[i], [...(perKeypoint.get(looked.keypoint[i]) ?? []), looked.words[i]]);
    expect(perKeypoint.size).toBe(Math.min(count, PROBE_KEYPOINTS));
    const taken: number[] = [];
    for (const [k, words] of perKeypoint) {
      const at = k * SOFT_QUERY_WORDS;
      // The nearest words in order, all within the ratio, and the next one (if any was left) beyond it.
      expect(words).toEqual(Array.from(nearest.words.subarray(at, at + words.length)));
      const limit = SOFT_QUERY_WORD_RATIO * nearest.distances[at];
      expect(nearest.distances[at + words.length - 1]).toBeLessThanOrEqual(limit);
      if (words.length < SOFT_QUERY_WORDS) expect(nearest.distances[at + words.length]).toBeGreaterThan(limit);
      taken.push(words.length);
    }
    // The ratio decides: some keypoints take one word, some all four.
    expect(Math.min(...taken)).toBe(1);
    expect(Math.max(...taken)).toBe(SOFT_QUERY_WORDS);

    const sharp = computeProbeLookups(count, probe.descriptors, 1);
    expect(sharp.count).toBe(QUERY_WORDS * Math.min(count, PROBE_KEYPOINTS));
    expect(Array.from(sharp.words)).toEqual(Array.from(lookupWords(upright, QUERY_WORDS).words));
  }, 60_000);
});
