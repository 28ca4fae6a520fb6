import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderCapture } from "@/lab/synth/capture";
import { captureSeed, subjectSeed } from "@/lab/synth/dataset";
import { createNoseSubject } from "@/lab/synth/nose-surface";
import {
  deserializeGenericBank,
  GENERIC_BANK_FILE,
  GENERICNESS_MAX,
  genericBank,
  keypointGenericness,
  probeVoteWeight,
  serializeGenericBank,
} from "./distinctiveness";
import { extractNoseImage } from "./extract";
import { compareTemplates } from "./pair-matcher";
import { DESCRIPTOR_DIMS, DESCRIPTOR_QUANT, GENERICNESS_REFERENCE, PROBE_VOTE_EXPONENT } from "./parameters";
import { descriptorSet, type NoseTemplate } from "./template";

/** A unit descriptor (int8 scale) along axis `axis`, or between two axes. */
function descriptor(weights: Record<number, number>): Int8Array {
  const d = new Int8Array(DESCRIPTOR_DIMS);
  const norm = Math.hypot(...Object.values(weights));
  for (const [axis, w] of Object.entries(weights)) d[Number(axis)] = Math.round((DESCRIPTOR_QUANT * w) / norm);
  return d;
}
const concat = (parts: Int8Array[]) => {
  const out = new Int8Array(parts.length * DESCRIPTOR_DIMS);
  parts.forEach((p, i) => out.set(p, i * DESCRIPTOR_DIMS));
  return out;
};

describe("keypoint genericness", () => {
  it("is the second-nearest bank descriptor's cosine: one look-alike is chance, two make a keypoint generic", () => {
    const bank = concat([descriptor({ 0: 1 }), descriptor({ 0: 1 }), descriptor({ 1: 1 }), descriptor({ 2: 1 })]);
    const [twice, once, none, between] = keypointGenericness(
      concat([descriptor({ 0: 1 }), descriptor({ 1: 1 }), descriptor({ 5: 1 }), descriptor({ 1: 1, 2: 1 })]),
      bank,
    );
    expect(twice).toBe(GENERICNESS_MAX);
    expect(once).toBe(0);
    expect(none).toBe(0);
    expect(between / GENERICNESS_MAX).toBeCloseTo(Math.SQRT1_2, 2);
  });

  it("is stored per keypoint by extraction, and the matcher weighs inliers by it", async () => {
    const seed = subjectSeed(4242, 0);
    const subject = createNoseSubject(seed);
    const [a, b] = await Promise.all(
      [0, 1].map(async (c) => {
        const result = await extractNoseImage((await renderCapture(subject, captureSeed(seed, c), { difficulty: "normal" })).jpeg);
        if (!result.ok || !result.template) throw new Error("the capture was not extracted");
        return result.template;
      }),
    );
    expect(a.genericness).toEqual(keypointGenericness(descriptorSet(a, 0)));
    expect(new Set(a.genericness).size).toBeGreaterThan(10);
    const stored = compareTemplates(a, b);
    expect(stored.inliers).toBeGreaterThan(10);
    const withGenericness = (t: NoseTemplate, byte: number): NoseTemplate => ({ ...t, genericness: new Uint8Array(t.genericness.length).fill(byte) });
    const distinctive = compareTemplates(withGenericness(a, 0), withGenericness(b, 0));
    const generic = compareTemplates(withGenericness(a, GENERICNESS_MAX), withGenericness(b, 0));
    // The same inliers either way: genericness weighs them, it does not choose them.
    expect(distinctive.inliers).toBe(stored.inliers);
    expect(generic.inliers).toBe(stored.inliers);
    expect(distinctive.similarity).toBeGreaterThan(stored.similarity);
    expect(generic.similarity).toBe(0);
  });
});

describe("probe vote weight", () => {
  it("is 1 for a typical keypoint, more for a distinctive one, 0 for one every nose has", () => {
    expect(probeVoteWeight(Math.round(GENERICNESS_REFERENCE * GENERICNESS_MAX))).toBeCloseTo(1, 1);
    expect(probeVoteWeight(0)).toBeCloseTo((1 / (1 - GENERICNESS_REFERENCE)) ** PROBE_VOTE_EXPONENT, 6);
    expect(probeVoteWeight(200)).toBeLessThan(probeVoteWeight(150));
    expect(probeVoteWeight(GENERICNESS_MAX)).toBe(0);
  });
});

describe("generic bank file", () => {
  it("round-trips and refuses bytes of another shape", () => {
    const bank = genericBank();
    expect(bank.length % DESCRIPTOR_DIMS).toBe(0);
    const bytes = serializeGenericBank(bank);
    expect(Buffer.from(bytes).equals(fs.readFileSync(path.resolve(GENERIC_BANK_FILE.pathname)))).toBe(true);
    expect(deserializeGenericBank(bytes)).toEqual(bank);
    expect(() => deserializeGenericBank(bytes.subarray(0, bytes.length - 1))).toThrow(/build:generic-bank/);
    const otherMagic = bytes.slice();
    otherMagic[0] ^= 1;
    expect(() => deserializeGenericBank(otherMagic)).toThrow(/build:generic-bank/);
  });
});
