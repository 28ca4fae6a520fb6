/**
 * The generator's ground truth for the engine's keypoints, shared by `npm run eval:correspondence` and
 * `npm run export:patches`: for two captures of one nose (a synthetic set made by `npm run synth`), a keypoint's
 * true partner is the keypoint of the other capture at the same nose-surface point (within a tolerance, at a
 * scale within 1.5x).
 */
import fs from "node:fs";
import path from "node:path";
import { decodeNoseImage } from "@/lib/biometrics/decode";
import { normaliseContrast } from "@/lib/biometrics/enhance";
import type { DescriptorNet } from "@/lib/biometrics/descriptor-net";
import { describeKeypoints, descriptorFrame, detectKeypoints, type Keypoint, type ScaleLevel } from "@/lib/biometrics/features";
import { deserializeTemplate, KEYPOINT_FIELDS, type NoseTemplate } from "@/lib/biometrics/template";
import { DESCRIPTOR_ANGLES_DEG, DESCRIPTOR_SETS, MATCHED_SETS } from "@/lib/biometrics/parameters";
import { planCapture, surfacePointOf } from "../synth/capture";
import {
  burstLayout,
  captureFileName,
  captureOptionsFor,
  captureSeed,
  createSubjectFor,
  MANIFEST_FILE,
  subjectDirName,
  subjectSeed,
  type DatasetManifest,
} from "../synth/dataset";
import { padShapeValue, type NoseSubject } from "../synth/nose-surface";

const SCALE_TOLERANCE = Math.log(1.5);

export interface GroundTruthCapture {
  subject: number;
  capture: number;
  burst: number;
  /** The capture's roll (radians): image = nose surface turned by it. */
  rotation: number;
  keypoints: Keypoint[];
  /** The engine's descriptors, one array per frame (DESCRIPTOR_ANGLES_DEG), upright first. */
  descriptors: Int8Array[];
  /** The scale space the keypoints were found in (only when asked for: it is large). */
  levels?: ScaleLevel[];
  /** count x 3: u, v, coverage on the nose surface. */
  surface: Float32Array;
  /** Working-size pixels per surface unit. */
  pixelsPerUnit: number;
}

export function readManifest(root: string): DatasetManifest {
  return JSON.parse(fs.readFileSync(path.join(root, MANIFEST_FILE), "utf8")) as DatasetManifest;
}

/**
 * How the generator rendered each capture of subject `s` (its turn, scale, warp, and for the real setting its camera,
 * backdrop and framing), in capture order, with the burst it belongs to (a capture alone is a burst of its own: its
 * index) and the subject (its pad outline). The same subject and options `npm run synth` renders with.
 */
export function capturePlans(manifest: DatasetManifest, s: number): { plan: ReturnType<typeof planCapture>; burst: number; subject: NoseSubject }[] {
  const seed = subjectSeed(manifest.seed, s);
  const subject = createSubjectFor(manifest.difficulty, seed);
  const bursts = burstLayout(seed, manifest.captures, manifest.difficulty);
  return Array.from({ length: manifest.captures }, (_, c) => {
    const burst = bursts[c];
    const plan = planCapture(subject, captureSeed(seed, c), captureOptionsFor(manifest, burst));
    return { plan, burst: burst?.seed ?? c, subject };
  });
}

/**
 * A synthetic set's templates as `npm run eval:pairs -- DIR --cache FILE` wrote them, with each image's subject (from
 * its name, sNNNNN/cNN.jpg) and how the generator rendered it (`truthOf`: each subject's plans are computed once, on
 * first use).
 */
export interface CachedSet {
  manifest: DatasetManifest;
  images: string[];
  templates: (NoseTemplate | null)[];
  subjectOf: number[];
  truthOf(image: number): ReturnType<typeof capturePlans>[number];
}

export function readCachedSet(root: string, cacheFile: string): CachedSet {
  const manifest = readManifest(root);
  const cache = JSON.parse(fs.readFileSync(cacheFile, "utf8")) as { images: string[]; templates: (string | null)[] };
  const subjectOf = cache.images.map((image) => Number(image.split("/")[0].slice(1)));
  const captureOf = cache.images.map((image) => Number(/c(\d+)/.exec(image.split("/")[1])![1]));
  const plansOf = new Map<number, ReturnType<typeof capturePlans>>();
  return {
    manifest,
    images: cache.images,
    templates: cache.templates.map((t) => (t ? deserializeTemplate(new Uint8Array(Buffer.from(t, "base64"))) : null)),
    subjectOf,
    truthOf(image) {
      const s = subjectOf[image];
      if (!plansOf.has(s)) plansOf.set(s, capturePlans(manifest, s));
      return plansOf.get(s)![captureOf[image]];
    },
  };
}

/** The regions of a capture, by what a pixel shows: the pad's interior, its edge, the fur on the rest of the dome, the backdrop. */
export const REGIONS = ["pad", "edge", "fur", "backdrop"] as const;
/** The pad's shape value (< 1 inside, 1 on the outline) that bounds the edge band on either side. */
const EDGE_BAND = [0.8, 1.25] as const;

/**
 * The region (index into REGIONS) that a template's keypoint shows, by the plan its capture was rendered from: a
 * real-setting ray that misses the dome meets the backdrop; elsewhere the pad's shape value at the surface point
 * decides.
 */
export function keypointRegion(plan: ReturnType<typeof planCapture>, subject: NoseSubject, template: NoseTemplate, keypoint: number): number {
  const x = (template.keypoints[keypoint * KEYPOINT_FIELDS] * plan.width) / template.width;
  const y = (template.keypoints[keypoint * KEYPOINT_FIELDS + 1] * plan.height) / template.height;
  const point = surfacePointOf(plan, x, y);
  if (plan.camera && point.coverage <= 0.01) return 3;
  const q = padShapeValue(subject.pad, point.u, point.v);
  return q < EDGE_BAND[0] ? 0 : q < EDGE_BAND[1] ? 1 : 2;
}

/**
 * Every capture of subject `s`: the engine's keypoints with their surface points, and either their descriptors (by
 * `options.net`, the engine's network by default) or, with `options.levels`, the scale space they were found in.
 */
export async function loadSubjectCaptures(
  root: string,
  manifest: DatasetManifest,
  s: number,
  options: { levels?: boolean; net?: DescriptorNet } = {},
): Promise<GroundTruthCapture[]> {
  const plans = capturePlans(manifest, s);
  const captures: GroundTruthCapture[] = [];
  for (let c = 0; c < manifest.captures; c++) {
    const { plan, burst } = plans[c];
    const file = path.join(root, subjectDirName(s, manifest.subjects), captureFileName(c, manifest.captures));
    const { image } = await decodeNoseImage(fs.readFileSync(file));
    const toCapture = plan.width / image.width;
    const { keypoints, levels } = detectKeypoints(normaliseContrast(image), image);
    const all = options.levels ? null : describeKeypoints(levels, keypoints, DESCRIPTOR_SETS, options.net);
    const descriptors = all ? DESCRIPTOR_ANGLES_DEG.map((_, set) => descriptorFrame(all, keypoints.length, set)) : [];
    const surface = new Float32Array(keypoints.length * 3);
    keypoints.forEach((k, i) => {
      const p = surfacePointOf(plan, (k.x + 0.5) * toCapture - 0.5, (k.y + 0.5) * toCapture - 0.5);
      surface.set([p.u, p.v, p.coverage], i * 3);
    });
    captures.push({ subject: s, capture: c, burst, rotation: plan.rotation, keypoints, descriptors, levels: options.levels ? levels : undefined, surface, pixelsPerUnit: plan.pixelsPerUnit / toCapture });
  }
  return captures;
}

/** For each keypoint of a, the keypoint of b at the same surface point (within `tolerancePx` of a's working size) and a similar physical scale, or -1. */
export function truePartners(a: GroundTruthCapture, b: GroundTruthCapture, tolerancePx: number): Int32Array {
  const partners = new Int32Array(a.keypoints.length).fill(-1);
  const tolerance = tolerancePx / a.pixelsPerUnit;
  for (let i = 0; i < a.keypoints.length; i++) {
    if (a.surface[i * 3 + 2] < 0.5) continue;
    let best = tolerance * tolerance;
    for (let j = 0; j < b.keypoints.length; j++) {
      const du = a.surface[i * 3] - b.surface[j * 3];
      const dv = a.surface[i * 3 + 1] - b.surface[j * 3 + 1];
      const scaleA = a.keypoints[i].sigma / a.pixelsPerUnit;
      const scaleB = b.keypoints[j].sigma / b.pixelsPerUnit;
      if (du * du + dv * dv < best && Math.abs(Math.log(scaleA / scaleB)) < SCALE_TOLERANCE) {
        best = du * du + dv * dv;
        partners[i] = j;
      }
    }
  }
  return partners;
}

/** The true turn (degrees) at which a's frame sees b's upright frame: the image is the surface turned by the capture's roll. */
export function trueTurnDeg(a: GroundTruthCapture, b: GroundTruthCapture): number {
  return ((a.rotation - b.rotation) * 180) / Math.PI;
}

/** The descriptor frame (index into DESCRIPTOR_ANGLES_DEG) nearest a turn, as the matcher's best rotation hypothesis would be. */
export function nearestFrame(turnDeg: number): number {
  return DESCRIPTOR_ANGLES_DEG.slice(0, MATCHED_SETS).reduce((best, angle, set) => (Math.abs(angle - turnDeg) < Math.abs(DESCRIPTOR_ANGLES_DEG[best] - turnDeg) ? set : best), 0);
}
