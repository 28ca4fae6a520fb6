import fs from "node:fs";
import { DESCRIPTOR_DIMS, SIGNATURE_BITS, VOCABULARY_COARSE, VOCABULARY_FINE } from "./parameters";
import { residentDotProducts, residentRows } from "./simd/dot-kernel";
import { nativeKernels, nativeVariant } from "./simd/native-kernels";

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

/** The most words a descriptor is looked up under (`assignWords`, `lookupWords`). */
export const MAX_WORDS_PER_DESCRIPTOR = 4;

/**
 * The `wordsPerDescriptor` (1 to MAX_WORDS_PER_DESCRIPTOR) nearest words of each descriptor (count x
 * wordsPerDescriptor, nearest first): the nearest `wordsPerDescriptor` coarse cells by one SIMD pass, then, cell by
 * cell, the SIMD dot products of the descriptors that chose the cell with its fine centroids. With `distances`
 * (count x wordsPerDescriptor), each word's squared distance to the descriptor less the descriptor's own squared norm
 * (the centroid's squared norm − 2 × the dot product, an integer) is written there too.
 */
export function assignWords(descriptors: Int8Array, wordsPerDescriptor: number, vocab: Vocabulary = vocabulary(), distances?: Int32Array): Uint16Array {
  const count = descriptors.length / DESCRIPTOR_DIMS;
  const out = new Uint16Array(count * wordsPerDescriptor);
  if (count === 0) return out;
  if (!Number.isInteger(wordsPerDescriptor) || wordsPerDescriptor < 1 || wordsPerDescriptor > MAX_WORDS_PER_DESCRIPTOR) {
    throw new Error(`a descriptor takes 1 to ${MAX_WORDS_PER_DESCRIPTOR} words`);
  }
  const coarseDots = residentDotProducts(descriptors, residentRows(vocab.coarse, DESCRIPTOR_DIMS), 0, VOCABULARY_COARSE);
  const fine = residentRows(vocab.fine, DESCRIPTOR_DIMS);
  const coarseNorms = normsOf(vocab.coarse);
  const fineNorms = normsOf(vocab.fine);
  const cellsToSearch = wordsPerDescriptor;
  // Each descriptor's nearest cells (ties: the lower cell), and the descriptors of each cell in order.
  const cells = new Int32Array(count * cellsToSearch);
  const perCell = new Int32Array(VOCABULARY_COARSE + 1);
  for (let i = 0; i < count; i++) {
    const nearest = nearestOf(coarseDots, i * VOCABULARY_COARSE, VOCABULARY_COARSE, coarseNorms, 0, noneNearer(cellsToSearch));
    for (let c = 0; c < cellsToSearch; c++) {
      cells[i * cellsToSearch + c] = nearest.index[c];
      perCell[nearest.index[c] + 1]++;
    }
  }
  for (let cell = 0; cell < VOCABULARY_COARSE; cell++) perCell[cell + 1] += perCell[cell];
  const members = new Int32Array(count * cellsToSearch);
  const placed = perCell.slice(0, VOCABULARY_COARSE);
  for (let i = 0; i < count; i++) for (let c = 0; c < cellsToSearch; c++) members[placed[cells[i * cellsToSearch + c]]++] = i;
  // The words of the searched cells, cell by cell in ascending order, fine centroids in order: a running nearest few
  // per descriptor keeps the first of equal distances, as one scan over all its candidates would.
  const words = Array.from({ length: count }, () => noneNearer(wordsPerDescriptor));
  const rows = new Int8Array(count * DESCRIPTOR_DIMS);
  for (let cell = 0; cell < VOCABULARY_COARSE; cell++) {
    const from = perCell[cell];
    const n = perCell[cell + 1] - from;
    if (n === 0) continue;
    for (let r = 0; r < n; r++) {
      const i = members[from + r];
      rows.set(descriptors.subarray(i * DESCRIPTOR_DIMS, (i + 1) * DESCRIPTOR_DIMS), r * DESCRIPTOR_DIMS);
    }
    const dots = residentDotProducts(rows.subarray(0, n * DESCRIPTOR_DIMS), fine, cell * VOCABULARY_FINE, VOCABULARY_FINE);
    for (let r = 0; r < n; r++) nearestOf(dots, r * VOCABULARY_FINE, VOCABULARY_FINE, fineNorms, cell * VOCABULARY_FINE, words[members[from + r]]);
  }
  for (let i = 0; i < count; i++) {
    for (let w = 0; w < wordsPerDescriptor; w++) {
      out[i * wordsPerDescriptor + w] = words[i].index[w];
      if (distances) distances[i * wordsPerDescriptor + w] = words[i].distance[w];
    }
  }
  return out;
}

/** The nearest few centroids found so far, nearest first (indices, -1 for none) and their distances. */
interface Nearest {
  index: Int32Array;
  distance: Float64Array;
}

function noneNearer(k: number): Nearest {
  return { index: new Int32Array(k).fill(-1), distance: new Float64Array(k).fill(Infinity) };
}

/**
 * `nearest` updated with centroids normsFrom + j (j < n) at distances norms[normsFrom + j] − 2 · dots[from + j] (to a
 * descriptor, up to its own norm), as float32: the first of equal distances stays first, as in one scan in order.
 */
function nearestOf(dots: Int32Array, from: number, n: number, norms: Float32Array, normsFrom: number, nearest: Nearest): Nearest {
  const { index, distance } = nearest;
  const k = index.length;
  for (let j = 0; j < n; j++) {
    const d = Math.fround(norms[normsFrom + j] - 2 * dots[from + j]);
    if (!(d < distance[k - 1])) continue;
    let at = k - 1;
    while (at > 0 && d < distance[at - 1]) {
      distance[at] = distance[at - 1];
      index[at] = index[at - 1];
      at--;
    }
    distance[at] = d;
    index[at] = normsFrom + j;
  }
  return nearest;
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
  const dots = residentDotProducts(descriptors, residentRows(rows, DESCRIPTOR_DIMS), 0, SIGNATURE_BITS);
  const projections = new Float32Array(dots.length);
  for (let i = 0; i < dots.length; i++) projections[i] = dots[i] / scale;
  return projections;
}

/**
 * Each descriptor's `wordsPerDescriptor` nearest words (`assignWords`, count x wordsPerDescriptor), the signature under
 * each (`signatureIn`, two uint32 a word) and each word's squared distance to the descriptor: by the native kernels
 * where they run (`lookupWords`, the same words, signatures and distances bit for bit), else by the WebAssembly kernel
 * and JavaScript.
 */
export function lookupWords(
  descriptors: Int8Array,
  wordsPerDescriptor: number,
  vocab: Vocabulary = vocabulary(),
): { words: Uint16Array; signatures: Uint32Array; distances: Int32Array } {
  const count = descriptors.length / DESCRIPTOR_DIMS;
  const variant = nativeVariant();
  const distances = new Int32Array(count * wordsPerDescriptor);
  let found: { words: Uint16Array; signatures: Uint32Array };
  if (variant !== null && nativeKernels && count > 0) {
    found = { words: new Uint16Array(count * wordsPerDescriptor), signatures: new Uint32Array(count * wordsPerDescriptor * 2) };
    const laid = nativeLayoutOf(vocab);
    nativeKernels.lookupWords(variant, descriptors, count, wordsPerDescriptor, laid.coarse, laid.fine, VOCABULARY_FINE, laid.coarseNorms, laid.fineNorms, laid.projection, laid.scale, vocab.medians, found.words, found.signatures, distances);
  } else {
    const words = assignWords(descriptors, wordsPerDescriptor, vocab, distances);
    const projections = projectDescriptors(descriptors, vocab);
    const signatures = new Uint32Array(count * wordsPerDescriptor * 2);
    for (let i = 0; i < count; i++) {
      for (let w = 0; w < wordsPerDescriptor; w++) {
        const at = i * wordsPerDescriptor + w;
        signatureIn(projections, i, words[at], signatures, at * 2, vocab);
      }
    }
    found = { words, signatures };
  }
  // The kernels' distances leave out the descriptor's own squared norm, the same for all its words.
  for (let i = 0; i < count; i++) {
    let norm = 0;
    for (let d = 0; d < DESCRIPTOR_DIMS; d++) norm += descriptors[i * DESCRIPTOR_DIMS + d] ** 2;
    for (let w = 0; w < wordsPerDescriptor; w++) distances[i * wordsPerDescriptor + w] += norm;
  }
  return { ...found, distances };
}

/** A vocabulary as the native `lookupWords` reads it: rows laid out by column pairs, 16 rows a block (kernels.c). */
interface NativeLayout {
  coarse: Int16Array;
  fine: Int16Array;
  projection: Int16Array;
  coarseNorms: Int32Array;
  fineNorms: Int32Array;
  scale: number;
}

const nativeLayouts = new WeakMap<Vocabulary, NativeLayout>();

function nativeLayoutOf(vocab: Vocabulary): NativeLayout {
  let laid = nativeLayouts.get(vocab);
  if (!laid) {
    const { rows, scale } = quantisedProjection(vocab.projection);
    laid = {
      coarse: byColumnPairs(vocab.coarse),
      fine: byColumnPairs(vocab.fine),
      projection: byColumnPairs(rows),
      coarseNorms: Int32Array.from(normsOf(vocab.coarse)),
      fineNorms: Int32Array.from(normsOf(vocab.fine)),
      scale,
    };
    nativeLayouts.set(vocab, laid);
  }
  return laid;
}

/** Rows of DESCRIPTOR_DIMS int8 (a multiple of 16 rows) as int16, 16 rows a block, column pair by column pair. */
function byColumnPairs(matrix: Int8Array): Int16Array {
  const pairs = DESCRIPTOR_DIMS / 2;
  const out = new Int16Array(matrix.length);
  for (let row = 0; row < matrix.length / DESCRIPTOR_DIMS; row++) {
    const block = Math.floor(row / 16);
    const lane = row % 16;
    for (let p = 0; p < pairs; p++) {
      for (let t = 0; t < 2; t++) out[(block * pairs + p) * 32 + lane * 2 + t] = matrix[row * DESCRIPTOR_DIMS + 2 * p + t];
    }
  }
  return out;
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
