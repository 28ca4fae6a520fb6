import sharp from "sharp";
import { renderCapture } from "@/lab/synth/capture";
import { captureOptionsFor, captureSeed, createSubjectFor, subjectSeed } from "@/lab/synth/dataset";
import { createNoseSubject, type NoseSubject } from "@/lab/synth/nose-surface";

// Test images for the API's biometric paths: pets and captures from the project's synthetic
// nose-print generator (lab/synth), so that they go through the real engine as real uploads would.
// Nothing here decides a match.

const DATASET_SEED = 20_261_122;
const subjects = new Map<number, NoseSubject>();

/** One JPEG capture ("normal" difficulty) of pet `petSeed`; `captureIndex` is a new photo. */
export async function noseCapture(petSeed: number, captureIndex: number): Promise<Buffer> {
  const seed = subjectSeed(DATASET_SEED, petSeed);
  if (!subjects.has(seed)) subjects.set(seed, createNoseSubject(seed));
  const { jpeg } = await renderCapture(subjects.get(seed)!, captureSeed(seed, captureIndex), { difficulty: "normal" });
  return jpeg;
}

/** One JPEG capture of the reality-matched setting (real detector crops' statistics, REAL-DATA.md), plain backdrop. */
export async function realNoseCapture(datasetSeed: number, subjectIndex: number, captureIndex: number): Promise<Buffer> {
  const seed = subjectSeed(datasetSeed, subjectIndex);
  const options = captureOptionsFor({ seed: datasetSeed, difficulty: "real", backdrop: "plain" }, undefined);
  return (await renderCapture(createSubjectFor("real", seed), captureSeed(seed, captureIndex), options)).jpeg;
}

/** A small deterministic prng (xorshift32) for test data. */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000;
  };
}

/** A plain, featureless JPEG: decodes fine, but the engine should find it unusable (or blank). */
export function flatJpeg(width = 400, height = 400): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 120, g: 110, b: 100 } } }).jpeg().toBuffer();
}

/** An ordinary photo-like JPEG for appearance uploads. */
export function appearanceJpeg(seed = 1): Promise<Buffer> {
  const rand = prng(seed);
  return sharp({ create: { width: 320, height: 240, channels: 3, background: { r: Math.floor(rand() * 255), g: 140, b: 90 } } })
    .jpeg()
    .toBuffer();
}

/** A capture of pet `petSeed` so defocused that the engine accepts it but finds it unusable. */
export async function blurredNoseCapture(petSeed: number, captureIndex: number): Promise<Buffer> {
  return sharp(await noseCapture(petSeed, captureIndex)).blur(30).jpeg({ quality: 90 }).toBuffer();
}
