import { descriptorFrame } from "./features";
import { DESCRIPTOR_DIMS, DESCRIPTOR_SETS, MATCHED_SETS, RERANK_KEYPOINTS, TEMPLATE_VERSION } from "./parameters";
import { deserializeSearchKey, searchKeyLengthAt, serializeSearchKey, searchKeyByteLength, type SearchKey } from "./search-key";

/**
 * The search form of one nose image's features: immutable typed arrays ready for matching.
 * The persisted form is `serializeTemplate`'s bytes, which carry a magic, a format version and sizes.
 */
export interface NoseTemplate {
  readonly version: number;
  readonly width: number;
  readonly height: number;
  readonly quality: number;
  /** count x KEYPOINT_FIELDS floats: x, y, sigma in WORK_SIZE pixel space, strongest keypoint first. */
  readonly keypoints: Float32Array;
  /**
   * sets x count x DESCRIPTOR_DIMS int8: one set per frame angle, upright first (`descriptorSet`). `sets`
   * (`descriptorSetCount`) is MATCHED_SETS, or DESCRIPTOR_SETS for a 1:N probe's image, whose outer frames
   * only its first-stage lookups read (extract.ts); the frames a template shares with another are the same.
   */
  readonly descriptors: Int8Array;
  /** count bytes: each keypoint's genericness (distinctiveness.ts), 0 = distinctive, 255 = what every nose has. */
  readonly genericness: Uint8Array;
  /** The image's entry in the 1:N inverted index (visual words, signatures, angles). */
  readonly searchKey: SearchKey;
}

export class TemplateFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateFormatError";
  }
}

const MAGIC = 0x544e4852; // "RHNT" little-endian
const HEADER_BYTES = 16;
/** Floats per keypoint in `NoseTemplate.keypoints`: x, y, sigma. */
export const KEYPOINT_FIELDS = 3;

export function keypointCount(template: NoseTemplate): number {
  return template.keypoints.length / KEYPOINT_FIELDS;
}

/** How many descriptor frames a template holds: MATCHED_SETS, or DESCRIPTOR_SETS with the outer ones. */
export function descriptorSetCount(template: NoseTemplate): number {
  const count = keypointCount(template);
  return count === 0 ? MATCHED_SETS : template.descriptors.length / (count * DESCRIPTOR_DIMS);
}

/** The descriptors of every keypoint in frame `set` (DESCRIPTOR_ANGLES_DEG[set]); set 0 is upright. */
export function descriptorSet(template: NoseTemplate, set: number): Int8Array {
  return descriptorFrame(template.descriptors, keypointCount(template), set);
}

/** The template cut to its `limit` strongest keypoints (all frames; the search key is kept as it is). */
export function strongestKeypoints(template: NoseTemplate, limit: number): NoseTemplate {
  const count = keypointCount(template);
  if (count <= limit) return template;
  const sets = descriptorSetCount(template);
  const descriptors = new Int8Array(sets * limit * DESCRIPTOR_DIMS);
  for (let set = 0; set < sets; set++) descriptors.set(descriptorSet(template, set).subarray(0, limit * DESCRIPTOR_DIMS), set * limit * DESCRIPTOR_DIMS);
  return {
    ...template,
    keypoints: template.keypoints.slice(0, limit * KEYPOINT_FIELDS),
    descriptors,
    genericness: template.genericness.slice(0, limit),
  };
}

const NO_SEARCH_KEY: SearchKey = { words: new Uint16Array(0), signatures: new Uint32Array(0), angles: new Uint8Array(0) };

/**
 * What the 1:N cascade's light comparison reads of an enrolled image (`lightRawScores`): the template cut to its
 * RERANK_KEYPOINTS strongest keypoints, without a search key. About a fifth of the template's bytes, so the deep
 * pass, which compares hundreds of pets lightly, loads a fifth of the bytes (galleries keep it in a column).
 */
export function lightTemplateOf(bytes: Uint8Array): Uint8Array {
  return serializeTemplate({ ...strongestKeypoints(deserializeTemplate(bytes), RERANK_KEYPOINTS), searchKey: NO_SEARCH_KEY });
}

/** A template holds the matched frames, or all of them with a 1:N probe's outer ones. */
function isFrameCount(sets: number): boolean {
  return sets === MATCHED_SETS || sets === DESCRIPTOR_SETS;
}

function featuresByteLength(count: number, sets: number): number {
  return HEADER_BYTES + count * (KEYPOINT_FIELDS * 4 + sets * DESCRIPTOR_DIMS + 1);
}

export function serializeTemplate(template: NoseTemplate): Uint8Array {
  const count = keypointCount(template);
  const sets = descriptorSetCount(template);
  if (!isFrameCount(sets)) throw new RangeError(`a template holds ${MATCHED_SETS} or ${DESCRIPTOR_SETS} descriptor frames, not ${sets}`);
  const keyStart = featuresByteLength(count, sets);
  const bytes = new Uint8Array(keyStart + searchKeyByteLength(template.searchKey.words.length));
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint16(4, template.version, true);
  view.setUint16(6, template.width, true);
  view.setUint16(8, template.height, true);
  view.setUint16(10, count, true);
  view.setUint16(12, DESCRIPTOR_DIMS, true);
  view.setUint8(14, template.quality);
  view.setUint8(15, sets);
  for (let i = 0; i < template.keypoints.length; i++) view.setFloat32(HEADER_BYTES + i * 4, template.keypoints[i], true);
  const asBytes = (values: Int8Array) => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const descriptorStart = HEADER_BYTES + count * KEYPOINT_FIELDS * 4;
  bytes.set(asBytes(template.descriptors), descriptorStart);
  bytes.set(template.genericness, descriptorStart + template.descriptors.length);
  serializeSearchKey(template.searchKey, bytes.subarray(keyStart));
  return bytes;
}

/** The format version of stored template bytes, without decoding the rest (to decide on re-extraction). */
export function templateVersionOf(bytes: Uint8Array): number {
  if (bytes.length < HEADER_BYTES) throw new TemplateFormatError("template is shorter than its header");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new TemplateFormatError("not a nose template (bad magic)");
  return view.getUint16(4, true);
}

/** The image quality (0-100) stored template bytes carry, without decoding the rest. */
export function templateQualityOf(bytes: Uint8Array): number {
  templateVersionOf(bytes);
  return bytes[14];
}

/** The number of descriptor frames in a template's header, checked. */
function frameCountOf(view: DataView): number {
  const sets = view.getUint8(15);
  if (!isFrameCount(sets)) throw new TemplateFormatError(`descriptor sets ${sets} are neither ${MATCHED_SETS} nor ${DESCRIPTOR_SETS}`);
  return sets;
}

/** Float32Array views read the platform's byte order; templates store little-endian floats. */
const littleEndian = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

/** Decode and validate stored bytes; a template from another engine version is refused, not misread. */
export function deserializeTemplate(bytes: Uint8Array): NoseTemplate {
  const version = templateVersionOf(bytes);
  if (version !== TEMPLATE_VERSION) {
    throw new TemplateFormatError(`template version ${version} is not the engine's ${TEMPLATE_VERSION}: re-extract it`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const width = view.getUint16(6, true);
  const height = view.getUint16(8, true);
  const count = view.getUint16(10, true);
  const dims = view.getUint16(12, true);
  if (dims !== DESCRIPTOR_DIMS) throw new TemplateFormatError(`descriptor size ${dims} is not ${DESCRIPTOR_DIMS}`);
  const sets = frameCountOf(view);
  const keyStart = featuresByteLength(count, sets);
  if (bytes.length < keyStart) throw new TemplateFormatError("template is shorter than its header says");
  let searchKey: SearchKey;
  try {
    if (bytes.length !== keyStart + searchKeyLengthAt(bytes.subarray(keyStart))) throw new RangeError("length does not match its header");
    searchKey = deserializeSearchKey(bytes.subarray(keyStart));
  } catch (error) {
    throw new TemplateFormatError(`template's search key is damaged: ${(error as Error).message}`);
  }
  // The arrays are views of `bytes` (templates are never changed in place): a 1:N search deserialises thousands of light
  // templates, and three copies each were most of the cost. Keypoints are copied only where the floats do not lie
  // aligned and little-endian in the bytes.
  const at = bytes.byteOffset + HEADER_BYTES;
  const start = at + count * KEYPOINT_FIELDS * 4;
  const keypoints =
    littleEndian && at % 4 === 0
      ? new Float32Array(bytes.buffer, at, count * KEYPOINT_FIELDS)
      : Float32Array.from({ length: count * KEYPOINT_FIELDS }, (_, i) => view.getFloat32(HEADER_BYTES + i * 4, true));
  for (let i = 0; i < keypoints.length; i++) {
    if (!Number.isFinite(keypoints[i])) throw new TemplateFormatError("template holds a non-finite keypoint value");
  }
  const descriptors = new Int8Array(bytes.buffer, start, sets * count * dims);
  const genericness = new Uint8Array(bytes.buffer, start + sets * count * dims, count);
  return { version, width, height, quality: view.getUint8(14), keypoints, descriptors, genericness, searchKey };
}

/**
 * Where the search key of the serialised template that starts `bytes` begins and ends (its end is the template's), as
 * the template's header and the key's own say; the header checked by `templateVersionOf` first.
 */
function searchKeyRange(bytes: Uint8Array): { start: number; end: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = featuresByteLength(view.getUint16(10, true), frameCountOf(view));
  try {
    return { start, end: start + searchKeyLengthAt(bytes.subarray(start)) };
  } catch (error) {
    throw new TemplateFormatError(`template's search key is damaged: ${(error as Error).message}`);
  }
}

/** Serialised templates stored as one value (a 1:N probe image's quarter-turned views): back to back, each self-delimiting. */
export function joinTemplates(templates: readonly Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(templates.reduce((sum, t) => sum + t.byteLength, 0));
  let at = 0;
  for (const t of templates) {
    joined.set(t, at);
    at += t.byteLength;
  }
  return joined;
}

/** The templates `joinTemplates` joined, as views of its bytes; a value that does not split into whole templates throws TemplateFormatError. */
export function splitTemplates(joined: Uint8Array): Uint8Array[] {
  const templates: Uint8Array[] = [];
  for (let at = 0; at < joined.byteLength; ) {
    const rest = joined.subarray(at);
    templateVersionOf(rest);
    const length = searchKeyRange(rest).end;
    if (at + length > joined.byteLength) throw new TemplateFormatError("joined templates end inside a template");
    templates.push(joined.subarray(at, at + length));
    at += length;
  }
  return templates;
}

/**
 * The search key inside stored template bytes, without decoding the rest: what a 1:N gallery holds of an
 * image (≈ 4 KB instead of ≈ 65 KB, ≈ 104 KB for a 1:N probe's image), so galleries can be loaded from a compact column.
 */
export function searchKeyOfTemplate(bytes: Uint8Array): Uint8Array {
  const version = templateVersionOf(bytes);
  if (version !== TEMPLATE_VERSION) throw new TemplateFormatError(`template version ${version} is not the engine's ${TEMPLATE_VERSION}: re-extract it`);
  const { start, end } = searchKeyRange(bytes);
  return bytes.slice(start, end);
}
