import { DESCRIPTOR_DIMS, TEMPLATE_VERSION } from "./parameters";
import { SEARCH_VECTOR_DIMS } from "./search-vector";

/**
 * The search form of one nose image's features: immutable typed arrays ready for matching.
 * The persisted form is `serializeTemplate`'s bytes, which carry a magic, a format version and sizes.
 */
export interface NoseTemplate {
  readonly version: number;
  readonly width: number;
  readonly height: number;
  readonly quality: number;
  /** count x 4 floats: x, y, sigma, angle (radians) in WORK_SIZE pixel space, strongest keypoint first. */
  readonly keypoints: Float32Array;
  /** count x DESCRIPTOR_DIMS int8. */
  readonly descriptors: Int8Array;
  /** SEARCH_VECTOR_DIMS int8: the whole-image descriptor for 1:N shortlisting. */
  readonly searchVector: Int8Array;
}

export class TemplateFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateFormatError";
  }
}

const MAGIC = 0x544e4852; // "RHNT" little-endian
const HEADER_BYTES = 16;

export function keypointCount(template: NoseTemplate): number {
  return template.keypoints.length / 4;
}

function templateByteLength(count: number): number {
  return HEADER_BYTES + count * (16 + DESCRIPTOR_DIMS) + SEARCH_VECTOR_DIMS;
}

export function serializeTemplate(template: NoseTemplate): Uint8Array {
  const count = keypointCount(template);
  const bytes = new Uint8Array(templateByteLength(count));
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint16(4, template.version, true);
  view.setUint16(6, template.width, true);
  view.setUint16(8, template.height, true);
  view.setUint16(10, count, true);
  view.setUint16(12, DESCRIPTOR_DIMS, true);
  view.setUint8(14, template.quality);
  for (let i = 0; i < template.keypoints.length; i++) view.setFloat32(HEADER_BYTES + i * 4, template.keypoints[i], true);
  const asBytes = (values: Int8Array) => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  bytes.set(asBytes(template.descriptors), HEADER_BYTES + count * 16);
  bytes.set(asBytes(template.searchVector), HEADER_BYTES + count * (16 + DESCRIPTOR_DIMS));
  return bytes;
}

/** The format version of stored template bytes, without decoding the rest (to decide on re-extraction). */
export function templateVersionOf(bytes: Uint8Array): number {
  if (bytes.length < HEADER_BYTES) throw new TemplateFormatError("template is shorter than its header");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new TemplateFormatError("not a nose template (bad magic)");
  return view.getUint16(4, true);
}

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
  if (bytes.length !== templateByteLength(count)) throw new TemplateFormatError("template length does not match its header");
  const keypoints = new Float32Array(count * 4);
  for (let i = 0; i < keypoints.length; i++) {
    const value = view.getFloat32(HEADER_BYTES + i * 4, true);
    if (!Number.isFinite(value)) throw new TemplateFormatError("template holds a non-finite keypoint value");
    keypoints[i] = value;
  }
  const start = bytes.byteOffset + HEADER_BYTES + count * 16;
  const descriptors = new Int8Array(bytes.buffer.slice(start, start + count * dims));
  const vectorStart = start + count * dims;
  const searchVector = new Int8Array(bytes.buffer.slice(vectorStart, vectorStart + SEARCH_VECTOR_DIMS));
  return { version, width, height, quality: view.getUint8(14), keypoints, descriptors, searchVector };
}
