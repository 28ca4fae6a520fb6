import { describe, expect, it } from "vitest";
import { chooseImagePairs } from "./image-pairs";

/** `subjects` subjects of `captures` images each, in order, as readLabelledDataset lists them. */
const layout = (subjects: number, captures: number) => Array.from({ length: subjects * captures }, (_, i) => Math.floor(i / captures));

describe("the image pairs of a labelled set", () => {
  it("holds every genuine pair and as many distinct impostor pairs as asked, the same each time", () => {
    // 1,280 images: a multiple of 256, where a linear congruential walk's tied low bits found only 3,180 distinct pairs.
    const subjectOf = layout(160, 8);
    const pairs = chooseImagePairs(subjectOf, 20_000);
    const genuine = pairs.filter((p) => p.genuine);
    const impostor = pairs.filter((p) => !p.genuine);
    expect(genuine).toHaveLength(160 * 28);
    expect(genuine.every((p) => subjectOf[p.a] === subjectOf[p.b] && p.a < p.b)).toBe(true);
    expect(impostor).toHaveLength(20_000);
    expect(impostor.every((p) => subjectOf[p.a] !== subjectOf[p.b] && p.a < p.b)).toBe(true);
    expect(new Set(impostor.map((p) => `${p.a},${p.b}`)).size).toBe(20_000);
    expect(chooseImagePairs(subjectOf, 20_000)).toEqual(pairs);
  });

  it("keeps only pairs of an early and a later capture when asked (across)", () => {
    const subjectOf = layout(50, 8);
    const rank = (i: number) => i % 8;
    const pairs = chooseImagePairs(subjectOf, 2_000, 4);
    expect(pairs.filter((p) => p.genuine)).toHaveLength(50 * 16);
    expect(pairs.every((p) => rank(p.a) < 4 !== rank(p.b) < 4)).toBe(true);
  });
});
