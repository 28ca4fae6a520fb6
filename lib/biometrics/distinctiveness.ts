import fs from "node:fs";
import { DESCRIPTOR_DIMS, DESCRIPTOR_QUANT, GENERICNESS_REFERENCE, PROBE_VOTE_EXPONENT } from "./parameters";
import { INT32_MIN, residentMatrix, secondBestDots } from "./simd/dot-kernel";

/**
 * How *generic* a keypoint is: a keypoint whose descriptor many other noses also offer (the pad's outline
 * against the background, a nostril's crescent, the philtrum) is weak evidence of identity, however well it
 * matches. Its genericness is the cosine of its second-nearest neighbour in a bank of upright descriptors of
 * other noses (generic-bank.bin, made by lab/scripts/build-generic-bank.ts from training seeds), stored per
 * keypoint in the template as a byte (0 = unlike anything in the bank, 255 = cosine 1). Matching weighs each
 * inlier, and the 1:N first stage each probe keypoint's votes, by `distinctivenessFactor` (pair-matcher.ts
 * `inlierWeight`, `probeVoteWeight`; docs/engine.md, format 9).
 * Changing the bank changes templates: bump TEMPLATE_VERSION.
 */

export const GENERIC_BANK_MAGIC = 0x42474852; // "RHGB"
export const GENERIC_BANK_FORMAT = 1;
const HEADER_BYTES = 16;

/** The bank file's bytes for `descriptors` (count x DESCRIPTOR_DIMS int8). */
export function serializeGenericBank(descriptors: Int8Array): Uint8Array {
  const count = descriptors.length / DESCRIPTOR_DIMS;
  if (!Number.isInteger(count) || count < 2) throw new Error("a generic bank needs at least two whole descriptors");
  const bytes = new Uint8Array(HEADER_BYTES + descriptors.length);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, GENERIC_BANK_MAGIC, true);
  view.setUint16(4, GENERIC_BANK_FORMAT, true);
  view.setUint16(6, DESCRIPTOR_DIMS, true);
  view.setUint32(8, count, true);
  bytes.set(new Uint8Array(descriptors.buffer, descriptors.byteOffset, descriptors.byteLength), HEADER_BYTES);
  return bytes;
}

export function deserializeGenericBank(bytes: Uint8Array): Int8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ok =
    bytes.length >= HEADER_BYTES &&
    view.getUint32(0, true) === GENERIC_BANK_MAGIC &&
    view.getUint16(4, true) === GENERIC_BANK_FORMAT &&
    view.getUint16(6, true) === DESCRIPTOR_DIMS &&
    view.getUint32(8, true) >= 2 &&
    bytes.length === HEADER_BYTES + view.getUint32(8, true) * DESCRIPTOR_DIMS;
  if (!ok) throw new Error("generic-bank.bin does not match the engine's descriptors: run npm run build:generic-bank");
  return new Int8Array(bytes.slice(HEADER_BYTES));
}

export const GENERIC_BANK_FILE = new URL("./generic-bank.bin", import.meta.url);

let loaded: Int8Array | null = null;

export function genericBank(): Int8Array {
  loaded ??= deserializeGenericBank(fs.readFileSync(GENERIC_BANK_FILE));
  return loaded;
}

/** Largest value of a genericness byte. */
export const GENERICNESS_MAX = 255;

/**
 * Each keypoint's genericness byte from its upright descriptors (count x DESCRIPTOR_DIMS): the second-nearest
 * bank descriptor's cosine, clamped to [0, 1] and scaled to 0–255. The second, not the first, neighbour: one
 * chance look-alike in the bank does not make a keypoint generic; two do.
 */
export function keypointGenericness(upright: Int8Array, bank: Int8Array = genericBank()): Uint8Array {
  const count = upright.length / DESCRIPTOR_DIMS;
  const genericness = new Uint8Array(count);
  if (count === 0) return genericness;
  const rowSecond = secondBestDots(upright, residentMatrix(bank, DESCRIPTOR_DIMS));
  const scale = DESCRIPTOR_QUANT * DESCRIPTOR_QUANT;
  for (let i = 0; i < count; i++) {
    const cosine = rowSecond[i] === INT32_MIN ? 0 : rowSecond[i] / scale;
    genericness[i] = Math.round(Math.min(1, Math.max(0, cosine)) * GENERICNESS_MAX);
  }
  return genericness;
}

/**
 * How much evidence a keypoint of genericness g in [0, 1] carries: ((1 − g) / (1 − GENERICNESS_REFERENCE))^exponent,
 * 1 for a typical keypoint, more for a distinctive one, 0 for one every nose has.
 */
export function distinctivenessFactor(genericness: number, exponent: number): number {
  return ((1 - genericness) / (1 - GENERICNESS_REFERENCE)) ** exponent;
}

/**
 * How much a probe keypoint's first-stage votes count, from its genericness byte (PROBE_VOTE_EXPONENT). Votes of
 * what every nose shares otherwise go to every pet alike.
 */
export function probeVoteWeight(byte: number): number {
  return distinctivenessFactor(byte / GENERICNESS_MAX, PROBE_VOTE_EXPONENT);
}
