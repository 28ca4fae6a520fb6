import fs from "node:fs";
import { DESCRIPTOR_DIMS, SIGNATURE_BITS, VOCABULARY_COARSE, VOCABULARY_FINE } from "./parameters";
import { dotProductMatrix } from "./simd/dot-kernel";

/**
 * The visual vocabulary of the 1:N index: two-level k-means centroids (int8, descriptor scale), a
 * random orthonormal projection for Hamming signatures, and each word's median projections (the
 * signature bit is "above the word's median"). Trained by lab/scripts/train-vocabulary.ts into
 * vocabulary.bin; changing it changes templates' search keys (bump TEMPLATE_VERSION).
 */
export interface Vocabulary {
  coarse: Int8Array;
  fine: Int8Array;
  /** SIGNATURE_BITS x DESCRIPTOR_DIMS, row-major, orthonormal rows. */
  projection: Float32Array;
  /** words x SIGNATURE_BITS. */
  medians: Float32Array;
}

export const VOCABULARY_MAGIC = 0x57564852; // "RHVW"
export const VOCABULARY_FORMAT = 1;
const HEADER_BYTES = 16;

export function vocabularyByteLength(): number {
  const words = VOCABULARY_COARSE * VOCABULARY_FINE;
  return HEADER_BYTES + (VOCABULARY_COARSE + words) * DESCRIPTOR_DIMS + 4 * SIGNATURE_BITS * DESCRIPTOR_DIMS + 4 * words * SIGNATURE_BITS;
}

export function serializeVocabulary(vocabulary: Vocabulary): Uint8Array {
  const bytes = new Uint8Array(vocabularyByteLength());
  const view = new DataView(bytes.buffer);
  view.setUint32(0, VOCABULARY_MAGIC, true);
  view.setUint16(4, VOCABULARY_FORMAT, true);
  view.setUint16(6, VOCABULARY_COARSE, true);
  view.setUint16(8, VOCABULARY_FINE, true);
  view.setUint16(10, DESCRIPTOR_DIMS, true);
  view.setUint16(12, SIGNATURE_BITS, true);
  let offset = HEADER_BYTES;
  for (const part of [vocabulary.coarse, vocabulary.fine, vocabulary.projection, vocabulary.medians]) {
    bytes.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), offset);
    offset += part.byteLength;
  }
  return bytes;
}

export function deserializeVocabulary(bytes: Uint8Array): Vocabulary {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const shapeOk =
    bytes.length === vocabularyByteLength() &&
    view.getUint32(0, true) === VOCABULARY_MAGIC &&
    view.getUint16(4, true) === VOCABULARY_FORMAT &&
    view.getUint16(6, true) === VOCABULARY_COARSE &&
    view.getUint16(8, true) === VOCABULARY_FINE &&
    view.getUint16(10, true) === DESCRIPTOR_DIMS &&
    view.getUint16(12, true) === SIGNATURE_BITS;
  if (!shapeOk) throw new Error("vocabulary.bin does not match the engine's vocabulary parameters: run npm run train:vocabulary");
  const copy = bytes.slice().buffer;
  const words = VOCABULARY_COARSE * VOCABULARY_FINE;
  let offset = HEADER_BYTES;
  const take = <T>(make: (buffer: ArrayBuffer, offset: number, length: number) => T, length: number, size: number): T => {
    const part = make(copy, offset, length);
    offset += length * size;
    return part;
  };
  return {
    coarse: take((b, o, n) => new Int8Array(b, o, n), VOCABULARY_COARSE * DESCRIPTOR_DIMS, 1),
    fine: take((b, o, n) => new Int8Array(b, o, n), words * DESCRIPTOR_DIMS, 1),
    projection: take((b, o, n) => new Float32Array(b, o, n), SIGNATURE_BITS * DESCRIPTOR_DIMS, 4),
    medians: take((b, o, n) => new Float32Array(b, o, n), words * SIGNATURE_BITS, 4),
  };
}

export const VOCABULARY_FILE = new URL("./vocabulary.bin", import.meta.url);

let loaded: Vocabulary | null = null;

export function vocabulary(): Vocabulary {
  loaded ??= deserializeVocabulary(fs.readFileSync(VOCABULARY_FILE));
  return loaded;
}

function squaredNorms(centroids: Int8Array): Float32Array {
  const count = centroids.length / DESCRIPTOR_DIMS;
  const norms = new Float32Array(count);
  for (let k = 0; k < count; k++) {
    let sum = 0;
    for (let d = 0; d < DESCRIPTOR_DIMS; d++) sum += centroids[k * DESCRIPTOR_DIMS + d] ** 2;
    norms[k] = sum;
  }
  return norms;
}

const normsCache = new WeakMap<Int8Array, Float32Array>();
function normsOf(centroids: Int8Array): Float32Array {
  let norms = normsCache.get(centroids);
  if (!norms) normsCache.set(centroids, (norms = squaredNorms(centroids)));
  return norms;
}

/** Indices of the `k` smallest values, smallest first (k is small). */
function smallest(values: ArrayLike<number>, k: number, from = 0, to = values.length): number[] {
  const best: number[] = [];
  for (let i = from; i < to; i++) {
    if (best.length === k && values[i] >= values[best[k - 1]]) continue;
    let at = best.length === k ? k - 1 : best.length;
    if (best.length < k) best.push(i);
    while (at > 0 && values[best[at - 1]] > values[i]) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = i;
  }
  return best;
}

/**
 * The `wordsPerDescriptor` nearest words of each descriptor (count x wordsPerDescriptor, nearest first):
 * the nearest coarse cells by one SIMD pass, then, cell by cell, the SIMD dot products of the
 * descriptors that chose the cell with its fine centroids.
 */
export function assignWords(descriptors: Int8Array, wordsPerDescriptor: number, vocab: Vocabulary = vocabulary()): Uint16Array {
  const count = descriptors.length / DESCRIPTOR_DIMS;
  const out = new Uint16Array(count * wordsPerDescriptor);
  if (count === 0) return out;
  const coarseDots = dotProductMatrix(descriptors, vocab.coarse, DESCRIPTOR_DIMS);
  const coarseNorms = normsOf(vocab.coarse);
  const fineNorms = normsOf(vocab.fine);
  const cellsToSearch = wordsPerDescriptor > 1 ? 2 : 1;
  const coarseDistance = new Float32Array(VOCABULARY_COARSE);
  const members: number[][] = Array.from({ length: VOCABULARY_COARSE }, () => []);
  for (let i = 0; i < count; i++) {
    for (let c = 0; c < VOCABULARY_COARSE; c++) coarseDistance[c] = coarseNorms[c] - 2 * coarseDots[i * VOCABULARY_COARSE + c];
    for (const cell of smallest(coarseDistance, cellsToSearch)) members[cell].push(i);
  }
  // Candidate words and distances per descriptor, over its searched cells.
  const candidates = cellsToSearch * VOCABULARY_FINE;
  const distance = new Float32Array(count * candidates);
  const word = new Uint16Array(count * candidates);
  const filled = new Int32Array(count);
  const rows = new Int8Array(count * DESCRIPTOR_DIMS);
  for (let cell = 0; cell < VOCABULARY_COARSE; cell++) {
    const chosen = members[cell];
    if (chosen.length === 0) continue;
    chosen.forEach((i, r) => rows.set(descriptors.subarray(i * DESCRIPTOR_DIMS, (i + 1) * DESCRIPTOR_DIMS), r * DESCRIPTOR_DIMS));
    const cellCentroids = vocab.fine.subarray(cell * VOCABULARY_FINE * DESCRIPTOR_DIMS, (cell + 1) * VOCABULARY_FINE * DESCRIPTOR_DIMS);
    const dots = dotProductMatrix(rows.subarray(0, chosen.length * DESCRIPTOR_DIMS), cellCentroids, DESCRIPTOR_DIMS);
    chosen.forEach((i, r) => {
      const at = i * candidates + filled[i];
      for (let f = 0; f < VOCABULARY_FINE; f++) {
        const w = cell * VOCABULARY_FINE + f;
        distance[at + f] = fineNorms[w] - 2 * dots[r * VOCABULARY_FINE + f];
        word[at + f] = w;
      }
      filled[i] += VOCABULARY_FINE;
    });
  }
  for (let i = 0; i < count; i++) {
    const nearest = smallest(distance, wordsPerDescriptor, i * candidates, i * candidates + filled[i]);
    for (let w = 0; w < wordsPerDescriptor; w++) out[i * wordsPerDescriptor + w] = word[nearest[Math.min(w, nearest.length - 1)]];
  }
  return out;
}

const quantisedProjections = new WeakMap<Float32Array, { rows: Int8Array; scale: number }>();

/** The projection as int8 for the SIMD kernel, scaled so its largest component is ±127. */
function quantisedProjection(projection: Float32Array): { rows: Int8Array; scale: number } {
  let quantised = quantisedProjections.get(projection);
  if (!quantised) {
    const scale = 127 / projection.reduce((max, v) => Math.max(max, Math.abs(v)), 0);
    quantised = { rows: Int8Array.from(projection, (v) => Math.round(v * scale)), scale };
    quantisedProjections.set(projection, quantised);
  }
  return quantised;
}

/** Projections of each descriptor on the signature axes (count x SIGNATURE_BITS), by the SIMD kernel. */
export function projectDescriptors(descriptors: Int8Array, vocab: Vocabulary = vocabulary()): Float32Array {
  const { rows, scale } = quantisedProjection(vocab.projection);
  const dots = dotProductMatrix(descriptors, rows, DESCRIPTOR_DIMS);
  const projections = new Float32Array(dots.length);
  for (let i = 0; i < dots.length; i++) projections[i] = dots[i] / scale;
  return projections;
}

/** The 64-bit Hamming signature (two uint32 words) of a projected descriptor inside `word`'s cell. */
export function signatureIn(projections: Float32Array, index: number, word: number, out: Uint32Array, at: number, vocab: Vocabulary = vocabulary()): void {
  let low = 0;
  let high = 0;
  const p = index * SIGNATURE_BITS;
  const m = word * SIGNATURE_BITS;
  for (let b = 0; b < 32; b++) if (projections[p + b] > vocab.medians[m + b]) low |= 1 << b;
  for (let b = 0; b < 32; b++) if (projections[p + 32 + b] > vocab.medians[m + 32 + b]) high |= 1 << b;
  out[at] = low >>> 0;
  out[at + 1] = high >>> 0;
}
