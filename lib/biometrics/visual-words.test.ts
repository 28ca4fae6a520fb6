import { afterEach, describe, expect, it } from "vitest";
import { DESCRIPTOR_DIMS, SIGNATURE_BITS, VOCABULARY_COARSE, VOCABULARY_FINE } from "./parameters";
import { ENGINE_KERNEL, ENGINE_KERNELS, useEngineKernel } from "./simd/native-kernels";
import { assignWords, lookupWords, projectDescriptors, signatureIn, vocabulary, type Vocabulary } from "./visual-words";

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
  const cellsToSearch = wordsPerDescriptor;
  return Array.from({ length: count }, (_, i) => {
    const cells = smallestIndices(Array.from({ length: VOCABULARY_COARSE }, (_, c) => distance(descriptors, i, vocab.coarse, c)), cellsToSearch).sort((x, y) => x - y);
    const words = cells.flatMap((cell) => Array.from({ length: VOCABULARY_FINE }, (_, f) => cell * VOCABULARY_FINE + f));
    return smallestIndices(words.map((w) => distance(descriptors, i, vocab.fine, w)), wordsPerDescriptor).map((k) => words[k]);
  }).flat();
}

/** Centroids with noise, some repeated exactly (equal distances: the first word must win), some far from all. */
function descriptorsNear(vocab: Vocabulary, count: number, seed: number): Int8Array {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
  const descriptors = new Int8Array(count * DESCRIPTOR_DIMS);
  for (let i = 0; i < count; i++) {
    const source = i % 3 === 0 ? vocab.coarse.subarray(((i * 7) % VOCABULARY_COARSE) * DESCRIPTOR_DIMS) : vocab.fine.subarray(((i * 811) % (VOCABULARY_COARSE * VOCABULARY_FINE)) * DESCRIPTOR_DIMS);
    for (let d = 0; d < DESCRIPTOR_DIMS; d++) {
      const noise = i % 5 === 0 ? 0 : Math.round((random() - 0.5) * 40);
      descriptors[i * DESCRIPTOR_DIMS + d] = Math.max(-128, Math.min(127, source[d] + noise));
    }
  }
  return descriptors;
}

/** assignWords' words, signatureIn's signatures and the words' squared distances: what lookupWords must give under every kernel set. */
function referenceLookups(descriptors: Int8Array, wordsPerDescriptor: number, vocab: Vocabulary): { words: number[]; signatures: number[]; distances: number[] } {
  const words = assignWords(descriptors, wordsPerDescriptor, vocab);
  const projections = projectDescriptors(descriptors, vocab);
  const signatures = new Uint32Array(words.length * 2);
  words.forEach((word, at) => signatureIn(projections, Math.floor(at / wordsPerDescriptor), word, signatures, at * 2, vocab));
  const distances = Array.from(words, (word, at) => distance(descriptors, Math.floor(at / wordsPerDescriptor), vocab.fine, word));
  return { words: Array.from(words), signatures: Array.from(signatures), distances };
}

/**
 * The engine's vocabulary with ties everywhere: every odd coarse cell a copy of the one before it, every cell's fine
 * centroids those of the first cell with every odd one a copy of the one before it (so a descriptor's two cells hold
 * words at equal distances: the lower cell's come first), and the medians of the words `descriptors` fall in set to
 * their projections on some axes (a projection equal to its median is not above it).
 */
function vocabularyWithTies(descriptors: Int8Array, vocab: Vocabulary): Vocabulary {
  const coarse = vocab.coarse.slice();
  const fine = vocab.fine.slice();
  const cellRows = VOCABULARY_FINE * DESCRIPTOR_DIMS;
  for (let cell = 1; cell < VOCABULARY_COARSE; cell++) fine.copyWithin(cell * cellRows, 0, cellRows);
  for (const rows of [coarse, fine]) {
    for (let row = 1; row < rows.length / DESCRIPTOR_DIMS; row += 2) rows.copyWithin(row * DESCRIPTOR_DIMS, (row - 1) * DESCRIPTOR_DIMS, row * DESCRIPTOR_DIMS);
  }
  const medians = vocab.medians.slice();
  const tied = { ...vocab, coarse, fine, medians };
  const words = assignWords(descriptors, 2, tied);
  const projections = projectDescriptors(descriptors, tied);
  words.forEach((word, at) => {
    const i = Math.floor(at / 2);
    for (let b = i % 7; b < SIGNATURE_BITS; b += 7) medians[word * SIGNATURE_BITS + b] = projections[i * SIGNATURE_BITS + b];
  });
  return tied;
}

describe("visual words", () => {
  afterEach(() => useEngineKernel(ENGINE_KERNEL));

  it.each(ENGINE_KERNELS)("%s: lookupWords gives assignWords' words and signatureIn's signatures, ties included", (kernel) => {
    useEngineKernel(kernel);
    const vocab = vocabulary();
    const descriptors = descriptorsNear(vocab, 203, 11);
    const tied = vocabularyWithTies(descriptors, vocab);
    let equalMedians = 0;
    for (const v of [vocab, tied]) {
      for (const wordsPerDescriptor of [1, 2, 3, 4]) {
        const reference = referenceLookups(descriptors, wordsPerDescriptor, v);
        const got = lookupWords(descriptors, wordsPerDescriptor, v);
        expect(Array.from(got.words)).toEqual(reference.words);
        expect(Array.from(got.signatures)).toEqual(reference.signatures);
        expect(Array.from(got.distances)).toEqual(reference.distances);
      }
      equalMedians += v.medians.filter((m, k) => m !== vocab.medians[k]).length;
    }
    // The tied vocabulary really ties: equal centroids chosen, medians moved.
    expect(equalMedians).toBeGreaterThan(1000);
    const tiedWords = referenceLookups(descriptors, 2, tied).words;
    expect(tiedWords.every((word, at) => (at % 2 === 0 ? word % 2 === 0 && tiedWords[at + 1] === word + 1 : true))).toBe(true);
    const empty = lookupWords(new Int8Array(0), 2, vocab);
    expect([empty.words.length, empty.signatures.length, empty.distances.length]).toEqual([0, 0, 0]);
  });

  it("assigns each descriptor the nearest words of its nearest cells, as a brute-force search does, ties included", () => {
    const vocab = vocabulary();
    const descriptors = descriptorsNear(vocab, 90, 7);
    for (const wordsPerDescriptor of [1, 2, 3, 4]) {
      expect(Array.from(assignWords(descriptors, wordsPerDescriptor))).toEqual(referenceWords(descriptors, wordsPerDescriptor, vocab));
    }
    expect(assignWords(new Int8Array(0), 2)).toHaveLength(0);
    expect(() => assignWords(descriptors, 5)).toThrow();
  });
});
