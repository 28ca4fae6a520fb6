import { descriptorFrame } from "./features";
import { DESCRIPTOR_ANGLES_DEG, DESCRIPTOR_DIMS, DESCRIPTOR_SETS, INDEXED_KEYPOINTS, MATCHED_SETS, INDEXED_TURNED_KEYPOINTS, PROBE_KEYPOINTS, QUERY_WORDS, SOFT_IMAGE_QUALITY, SOFT_QUERY_WORD_RATIO, SOFT_QUERY_WORDS } from "./parameters";
import { lookupWords, VOCABULARY_FORMAT } from "./visual-words";

/**
 * An image's entry in the 1:N inverted index: for its INDEXED_KEYPOINTS strongest keypoints in the upright
 * frame, then its INDEXED_TURNED_KEYPOINTS strongest in each turned frame, the visual word of the descriptor,
 * the 64-bit Hamming signature within the word, and the angle of the descriptor's frame (256 steps a turn).
 * 11 bytes an entry (≈ 4.4 KB an image), so galleries load keys rather than whole templates. Persisted form:
 * "RHSK", format, count, then signatures (2 x uint32 each), words (uint16), angles (uint8).
 */
export interface SearchKey {
  readonly words: Uint16Array;
  readonly signatures: Uint32Array;
  readonly angles: Uint8Array;
}

/**
 * A probe image's lookups: each keypoint in each descriptor frame under its nearest words, with a
 * signature per word and the frame's angle, so each rotation hypothesis votes into its own orientation
 * bin. One keypoint's lookups (in one frame) are consecutive and share their `keypoint` number: an
 * enrolled image takes at most one vote from them.
 */
export interface ProbeLookups {
  count: number;
  keypoint: Uint32Array;
  words: Uint16Array;
  /** count x 2. */
  signatures: Uint32Array;
  angles: Uint8Array;
  /** Per lookup: how much its votes count (its keypoint's distinctiveness; 1 when unknown). */
  weights: Float32Array;
}

const MAGIC = 0x4b534852; // "RHSK"
const HEADER_BYTES = 8;

export function searchKeyByteLength(count: number): number {
  return HEADER_BYTES + count * 11;
}

/** Orientation in radians to 256 steps a turn. */
export function angleStep(radians: number): number {
  return Math.round((radians / (2 * Math.PI)) * 256) & 255;
}

/**
 * The `limit` strongest keypoints of one descriptor frame (`set`), each under its nearest word and its next nearest
 * up to `wordsPerKeypoint` words whose squared distance is at most `ratio` times the nearest's, with a signature in each;
 * `first[k]` is keypoint k's first lookup (count + 1 entries).
 */
function wordsAndSignatures(
  keypointTotal: number,
  descriptors: Int8Array,
  set: number,
  limit: number,
  wordsPerKeypoint: number,
  ratio: number,
): { count: number; first: Uint32Array; words: Uint16Array; signatures: Uint32Array; angles: Uint8Array } {
  const count = Math.min(limit, keypointTotal);
  const strongest = descriptorFrame(descriptors, keypointTotal, set).subarray(0, count * DESCRIPTOR_DIMS);
  const nearest = lookupWords(strongest, wordsPerKeypoint);
  const angles = new Uint8Array(count).fill(angleStep((DESCRIPTOR_ANGLES_DEG[set] * Math.PI) / 180));
  // Unbounded, every keypoint takes all its words: the lookups as found.
  if (ratio === Infinity) {
    const first = Uint32Array.from({ length: count + 1 }, (_, k) => k * wordsPerKeypoint);
    return { count, first, words: nearest.words, signatures: nearest.signatures, angles };
  }
  const first = new Uint32Array(count + 1);
  const words = new Uint16Array(count * wordsPerKeypoint);
  const signatures = new Uint32Array(count * wordsPerKeypoint * 2);
  let kept = 0;
  for (let k = 0; k < count; k++) {
    first[k] = kept;
    const from = k * wordsPerKeypoint;
    const within = ratio * nearest.distances[from];
    for (let w = 0; w < wordsPerKeypoint && (w === 0 || nearest.distances[from + w] <= within); w++, kept++) {
      words[kept] = nearest.words[from + w];
      signatures[kept * 2] = nearest.signatures[(from + w) * 2];
      signatures[kept * 2 + 1] = nearest.signatures[(from + w) * 2 + 1];
    }
  }
  first[count] = kept;
  return { count, first, words: words.subarray(0, kept), signatures: signatures.subarray(0, kept * 2), angles };
}

/**
 * The gallery's entry of an image: its upright frame (set 0), then each turned frame's strongest keypoints,
 * so that a probe's turned frames meet the opposite turned frames (parameters.ts, INDEXED_TURNED_KEYPOINTS).
 */
export function computeSearchKey(keypointTotal: number, descriptors: Int8Array): SearchKey {
  const parts = Array.from({ length: MATCHED_SETS }, (_, set) =>
    wordsAndSignatures(keypointTotal, descriptors, set, set === 0 ? INDEXED_KEYPOINTS : INDEXED_TURNED_KEYPOINTS, 1, Infinity),
  );
  const count = parts.reduce((n, part) => n + part.count, 0);
  const key = { words: new Uint16Array(count), signatures: new Uint32Array(count * 2), angles: new Uint8Array(count) };
  let at = 0;
  for (const part of parts) {
    key.words.set(part.words, at);
    key.signatures.set(part.signatures, at * 2);
    key.angles.set(part.angles, at);
    at += part.count;
  }
  return key;
}

/** The words a probe keypoint's descriptor is looked up under: its nearest, and the next up to `most` within `ratio`. */
export interface QueryWords {
  most: number;
  ratio: number;
}

/** A sharp probe image's lookups: each descriptor under its QUERY_WORDS nearest words. */
const SHARP_QUERY_WORDS: QueryWords = { most: QUERY_WORDS, ratio: Infinity };

/**
 * How a probe image of this quality looks its keypoints up: a soft image (below SOFT_IMAGE_QUALITY) under its nearest
 * word and the next nearest up to SOFT_QUERY_WORDS within SOFT_QUERY_WORD_RATIO, another under its QUERY_WORDS nearest.
 */
export function queryWordsFor(quality: number): QueryWords {
  return quality < SOFT_IMAGE_QUALITY ? { most: SOFT_QUERY_WORDS, ratio: SOFT_QUERY_WORD_RATIO } : SHARP_QUERY_WORDS;
}

/**
 * A probe image's lookups in its descriptor frames `fromSet` to `sets` - 1 (all by default; the first MATCHED_SETS for
 * the cascade's fast pass, the others for its deep pass), one frame after another, under `query`'s words; each lookup's
 * votes weighted by `keypointWeight` of its keypoint (1 by default).
 */
export function computeProbeLookups(
  keypointTotal: number,
  descriptors: Int8Array,
  sets: number = DESCRIPTOR_SETS,
  keypointWeight: (keypoint: number) => number = () => 1,
  fromSet = 0,
  query: QueryWords = SHARP_QUERY_WORDS,
): ProbeLookups {
  const frames = Array.from({ length: Math.max(0, sets - fromSet) }, (_, i) => fromSet + i);
  const parts = frames.map((set) => wordsAndSignatures(keypointTotal, descriptors, set, PROBE_KEYPOINTS, query.most, query.ratio));
  const total = parts.reduce((n, part) => n + part.words.length, 0);
  const keypoint = new Uint32Array(total);
  const words = new Uint16Array(total);
  const signatures = new Uint32Array(total * 2);
  const angles = new Uint8Array(total);
  const weights = new Float32Array(total);
  let at = 0;
  let keypoints = 0;
  for (const part of parts) {
    words.set(part.words, at);
    signatures.set(part.signatures, at * 2);
    for (let k = 0; k < part.count; k++) {
      const from = at + part.first[k];
      const to = at + part.first[k + 1];
      keypoint.fill(keypoints + k, from, to);
      angles.fill(part.angles[k], from, to);
      weights.fill(keypointWeight(k), from, to);
    }
    at += part.words.length;
    keypoints += part.count;
  }
  return { count: total, keypoint, words, signatures, angles, weights };
}

export function serializeSearchKey(key: SearchKey, out = new Uint8Array(searchKeyByteLength(key.words.length))): Uint8Array {
  const count = key.words.length;
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(0, MAGIC, true);
  view.setUint16(4, VOCABULARY_FORMAT, true);
  view.setUint16(6, count, true);
  let offset = HEADER_BYTES;
  for (let i = 0; i < count * 2; i++, offset += 4) view.setUint32(offset, key.signatures[i], true);
  for (let i = 0; i < count; i++, offset += 2) view.setUint16(offset, key.words[i], true);
  out.set(key.angles, offset);
  return out;
}

/** The byte length of the search key that starts at `bytes[0]` (to find where it ends inside a template). */
export function searchKeyLengthAt(bytes: Uint8Array): number {
  if (bytes.length < HEADER_BYTES) throw new RangeError("search key is shorter than its header");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new RangeError("not a search key (bad magic)");
  return searchKeyByteLength(view.getUint16(6, true));
}

/** Whether these bytes start as a search key does ("RHSK"), not as a whole template. */
export function isSearchKey(bytes: Uint8Array): boolean {
  return bytes.length >= HEADER_BYTES && new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true) === MAGIC;
}

/** The persisted form is little-endian: on a little-endian host its arrays are copied as bytes. */
const LITTLE_ENDIAN_HOST = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

export function deserializeSearchKey(bytes: Uint8Array): SearchKey {
  const length = searchKeyLengthAt(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint16(4, true) !== VOCABULARY_FORMAT) throw new RangeError("search key from another vocabulary");
  if (bytes.length !== length) throw new RangeError("search key length does not match its header");
  const count = view.getUint16(6, true);
  const signatures = new Uint32Array(count * 2);
  const words = new Uint16Array(count);
  let offset = HEADER_BYTES;
  if (LITTLE_ENDIAN_HOST) {
    // A gallery load decodes tens of thousands of keys a second: one copy an array rather than a read a value.
    new Uint8Array(signatures.buffer).set(bytes.subarray(offset, offset + count * 8));
    offset += count * 8;
    new Uint8Array(words.buffer).set(bytes.subarray(offset, offset + count * 2));
    offset += count * 2;
  } else {
    for (let i = 0; i < count * 2; i++, offset += 4) signatures[i] = view.getUint32(offset, true);
    for (let i = 0; i < count; i++, offset += 2) words[i] = view.getUint16(offset, true);
  }
  return { words, signatures, angles: bytes.slice(offset, offset + count) };
}
