import { describe, expect, it } from "vitest";
import { backdropFractionOf, planCapture, renderCapture } from "@/lab/synth/capture";
import { burstLayout, captureOptionsFor, captureSeed, createSubjectFor, subjectSeed } from "@/lab/synth/dataset";
import { Rng } from "@/lab/synth/prng";
import { burstinessFactor, selfSimilarity } from "./burstiness";
import { decodeNoseImage } from "./decode";
import { normaliseContrast } from "./enhance";
import { extractNoseImage } from "./extract";
import { descriptorFrame, extractLocalFeatures } from "./features";
import { compareTemplates } from "./pair-matcher";
import { BURST_REFILL_DROP, BURSTINESS_FULL, BURSTINESS_NONE, DESCRIPTOR_DIMS, DESCRIPTOR_QUANT } from "./parameters";
import { DECISION_THRESHOLD, pairScore } from "./scoring";
import type { NoseTemplate } from "./template";

/** A random unit descriptor, int8-quantised as the engine stores them. */
function randomDescriptor(rng: Rng): Int8Array {
  const v = Array.from({ length: DESCRIPTOR_DIMS }, () => rng.normal());
  const norm = Math.hypot(...v);
  return Int8Array.from(v, (x) => Math.round((x / norm) * DESCRIPTOR_QUANT));
}

describe("burstiness: a keypoint repeated across its own image is weak evidence", () => {
  it("gives a pattern repeated at a distance the factor 0, a unique keypoint and a blob seen at two scales the factor 1", () => {
    const rng = new Rng(5);
    const pattern = randomDescriptor(rng);
    const blob = randomDescriptor(rng);
    const descriptors: Int8Array[] = [];
    const positions: number[] = [];
    const add = (d: Int8Array, x: number, y: number, sigma: number) => {
      descriptors.push(d);
      positions.push(x, y, sigma);
    };
    // Keypoints 0–3: one pattern every 60 px (a checked table); 4–5: one blob at two neighbouring scales; 6–29: unique.
    for (let i = 0; i < 4; i++) add(pattern, 20 + 60 * i, 290, 3.5);
    add(blob, 160, 160, 3.5);
    add(blob, 161, 160, 4.9);
    for (let i = 0; i < 24; i++) add(randomDescriptor(rng), 40 + 10 * i, 40 + 9 * (i % 7), 2.5);
    const upright = new Int8Array(descriptors.length * DESCRIPTOR_DIMS);
    descriptors.forEach((d, i) => upright.set(d, i * DESCRIPTOR_DIMS));
    const similarity = selfSimilarity(upright, Float32Array.from(positions), 3);
    for (let i = 0; i < 4; i++) {
      expect(similarity[i]).toBeGreaterThan(0.99);
      expect(burstinessFactor(similarity[i]!)).toBe(0);
    }
    for (let i = 4; i < descriptors.length; i++) {
      expect(similarity[i]).toBeLessThan(BURSTINESS_FULL);
      expect(burstinessFactor(similarity[i]!)).toBe(1);
    }
    expect(burstinessFactor((BURSTINESS_FULL + BURSTINESS_NONE) / 2)).toBeCloseTo(0.5, 6);
  });

  // Seed 700, loose framing, one periodic backdrop behind every capture: the captures below are those whose
  // impostor pairs scored 100 before burstiness weighting (docs/decisions/0015-burstiness-weighted-inliers.md).
  const job = { seed: 700, difficulty: "real" as const, backdrop: "shared-periodic" as const, framing: "loose" as const };
  async function render(subjectIndex: number, captureIndex: number) {
    const seed = subjectSeed(job.seed, subjectIndex);
    const subject = createSubjectFor("real", seed);
    const options = captureOptionsFor(job, burstLayout(seed, 8, "real")[captureIndex]);
    const { jpeg } = await renderCapture(subject, captureSeed(seed, captureIndex), options);
    return { jpeg, subject, seed, options };
  }
  async function capture(subjectIndex: number, captureIndex: number): Promise<{ template: NoseTemplate; backdrop: number }> {
    const { jpeg, subject, seed, options } = await render(subjectIndex, captureIndex);
    const result = await extractNoseImage(jpeg);
    if (!result.ok || !result.template) throw new Error(`capture ${subjectIndex}/${captureIndex} unusable`);
    return { template: result.template, backdrop: backdropFractionOf(planCapture(subject, captureSeed(seed, captureIndex), options)) };
  }

  it("keeps impostor pairs composed on one shared periodic backdrop below the threshold, and a genuine pair above it", async () => {
    const [a, b, c, d] = await Promise.all([capture(4, 0), capture(7, 4), capture(3, 7), capture(4, 1)]);
    for (const { backdrop } of [a, b, c, d]) expect(backdrop).toBeGreaterThan(0.2);
    expect(pairScore(compareTemplates(a.template, b.template).similarity)).toBeLessThan(DECISION_THRESHOLD);
    expect(pairScore(compareTemplates(c.template, d.template).similarity)).toBeLessThan(DECISION_THRESHOLD);
    expect(pairScore(compareTemplates(a.template, d.template).similarity)).toBeGreaterThanOrEqual(DECISION_THRESHOLD);
  }, 120_000);

  it("with refill rounds, spends the keypoint budget on the nose instead of the periodic backdrop", async () => {
    const { jpeg } = await render(4, 0);
    const { image } = await decodeNoseImage(jpeg);
    const normalised = normaliseContrast(image);
    // How many keypoints of a set are not a repeated pattern (self-similarity among the set at most BURST_REFILL_DROP).
    const unique = (rounds: number) => {
      const { keypoints, descriptors } = extractLocalFeatures(normalised, image, 1, rounds);
      const packed = Float32Array.from(keypoints.flatMap((k) => [k.x, k.y, k.sigma]));
      const similarity = selfSimilarity(descriptorFrame(descriptors, keypoints.length, 0), packed, 3);
      return { total: keypoints.length, unique: similarity.filter((s) => s <= BURST_REFILL_DROP).length };
    };
    const plain = unique(0);
    const refilled = unique(2);
    // This capture's backdrop takes most of today's 300 keypoints; refilled, every keypoint kept is unique in its set,
    // so the matcher may take their factors as 1 (pair-matcher.ts) as long as the drop is at most BURSTINESS_FULL.
    expect(BURST_REFILL_DROP).toBeLessThanOrEqual(BURSTINESS_FULL);
    expect(plain.unique).toBeLessThan(plain.total / 2);
    expect(refilled.unique).toBe(refilled.total);
    expect(refilled.unique).toBeGreaterThan(1.5 * plain.unique);
  }, 120_000);
});
