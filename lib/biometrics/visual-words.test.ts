import { describe, expect, it } from "vitest";
import { DESCRIPTOR_DIMS, VOCABULARY_COARSE, VOCABULARY_FINE } from "./parameters";
import { assignWords, vocabulary, type Vocabulary } from "./visual-words";

/** Squared distance of descriptor i of `a` to centroid k of `b`, by plain loops. */
function distance(a: Int8Array, i: number, b: Int8Array, k: number): number {
  let sum = 0;
  for (let d = 0; d < DESCRIPTOR_DIMS; d++) sum += (a[i * DESCRIPTOR_DIMS + d] - b[k * DESCRIPTOR_DIMS + d]) ** 2;
  return sum;
}

/** Indices of the k smallest values in order, the first of equal values first. */
function smallestIndices(values: number[], k: number): number[] {
  return values
    .map((value, index) => ({ value, index }))
    .sort((x, y) => x.value - y.value || x.index - y.index)
    .slice(0, k)
    .map((entry) => entry.index);
}

/** The two-level assignment by brute force: the nearest cells, then the nearest words among their fine centroids. */
function referenceWords(descriptors: Int8Array, wordsPerDescriptor: number, vocab: Vocabulary): number[] {
  const count = descriptors.length / DESCRIPTOR_DIMS;
  const cellsToSearch = wordsPerDescriptor > 1 ? 2 : 1;
  return Array.from({ length: count }, (_, i) => {
    const cells = smallestIndices(Array.from({ length: VOCABULARY_COARSE }, (_, c) => distance(descriptors, i, vocab.coarse, c)), cellsToSearch).sort((x, y) => x - y);
    const words = cells.flatMap((cell) => Array.from({ length: VOCABULARY_FINE }, (_, f) => cell * VOCABULARY_FINE + f));
    return smallestIndices(words.map((w) => distance(descriptors, i, vocab.fine, w)), wordsPerDescriptor).map((k) => words[k]);
  }).flat();
}

describe("visual words", () => {
  it("assigns each descriptor the nearest words of its nearest cells, as a brute-force search does, ties included", () => {
    const vocab = vocabulary();
    let state = 7;
    const random = () => ((state = (state * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
    // Centroids with noise, some repeated exactly (equal distances: the first word must win), some far from all.
    const descriptors = new Int8Array(90 * DESCRIPTOR_DIMS);
    for (let i = 0; i < 90; i++) {
      const source = i % 3 === 0 ? vocab.coarse.subarray(((i * 7) % VOCABULARY_COARSE) * DESCRIPTOR_DIMS) : vocab.fine.subarray(((i * 811) % (VOCABULARY_COARSE * VOCABULARY_FINE)) * DESCRIPTOR_DIMS);
      for (let d = 0; d < DESCRIPTOR_DIMS; d++) {
        const noise = i % 5 === 0 ? 0 : Math.round((random() - 0.5) * 40);
        descriptors[i * DESCRIPTOR_DIMS + d] = Math.max(-128, Math.min(127, source[d] + noise));
      }
    }
    for (const wordsPerDescriptor of [1, 2]) {
      expect(Array.from(assignWords(descriptors, wordsPerDescriptor))).toEqual(referenceWords(descriptors, wordsPerDescriptor, vocab));
    }
    expect(assignWords(new Int8Array(0), 2)).toHaveLength(0);
  });
});
