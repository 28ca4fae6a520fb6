import { decodeNoseImage } from "./decode";
import { normaliseContrast } from "./enhance";
import { keypointGenericness } from "./distinctiveness";
import { descriptorFrame, extractLocalFeatures } from "./features";
import { ImageRejection, type ImageRejectionCode } from "./image-rejection";
import { DESCRIPTOR_SETS, MATCHED_SETS, TEMPLATE_VERSION } from "./parameters";
import { computeSearchKey } from "./search-key";
import { assessQuality, measureImageFigures, type QualityReport } from "./quality";
import { KEYPOINT_FIELDS, type NoseTemplate } from "./template";
import { allQuarterTurns, TurnableImage } from "./turns";

export type ImageExtraction =
  | { ok: true; quality: QualityReport; template: NoseTemplate | null; turnedViews: NoseTemplate[] | null; timings: Record<string, number> }
  | { ok: false; rejection: { code: ImageRejectionCode; message: string } };

export interface ExtractionOptions {
  /**
   * Also describe the keypoints in the outer ± 40° frames (DESCRIPTOR_SETS instead of MATCHED_SETS). Only a 1:N
   * probe's first-stage lookups read them (search-key.ts); enrolled images and 1:1 probes never do, and each frame
   * is one network evaluation per keypoint, so without them an extraction takes about a fifth less time
   * (docs/engine.md, "Outer frames for 1:N probes only").
   */
  outerFrames?: boolean;
  /**
   * Also keep the template of an image the quality gate refuses, when it has keypoints (its quality report still says
   * unusable). For scoring single image pairs (`eval pairs`), where no retake is possible: a soft photo keeps some of
   * its nose's evidence, and a refused image scored 0 threw it away (decision 0019). The service's jobs never ask for
   * it: they count and compare usable images only, and ask the clinic to capture again.
   */
  describeUnusable?: boolean;
  /**
   * Also make the template's quarter-turned views (turns.ts, `quarterTurnViews`), from the scale space the extraction
   * built: what a 1:N search's turned pass compares (decision 0042). A 1:N probe's upload makes them, so that a search
   * whose upright passes accept nobody (every unknown animal) does not decode the JPEG and describe them then.
   */
  turnedViews?: boolean;
}

/**
 * The extraction pipeline, read top to bottom: decode → measure → normalise → keypoints/descriptors →
 * quality verdict → template. An unusable image still gets its quality report (support needs it).
 */
export async function extractNoseImage(
  jpeg: Uint8Array,
  { outerFrames = false, describeUnusable = false, turnedViews = false }: ExtractionOptions = {},
): Promise<ImageExtraction> {
  const t0 = performance.now();
  let decoded;
  try {
    decoded = await decodeNoseImage(jpeg);
  } catch (error) {
    if (error instanceof ImageRejection) return { ok: false, rejection: { code: error.code, message: error.message } };
    throw error;
  }
  const t1 = performance.now();
  const { image, originalWidth, originalHeight } = decoded;
  const measured = measureImageFigures(image, Math.min(originalWidth, originalHeight));
  const normalised = normaliseContrast(image);
  const { keypoints, descriptors, levels } = extractLocalFeatures(normalised, image, outerFrames ? DESCRIPTOR_SETS : MATCHED_SETS);
  const quality = assessQuality({ ...measured, keypoints: keypoints.length });
  const t2 = performance.now();
  const packed = new Float32Array(keypoints.length * KEYPOINT_FIELDS);
  keypoints.forEach((k, i) => packed.set([k.x, k.y, k.sigma], i * KEYPOINT_FIELDS));
  const template: NoseTemplate | null =
    quality.usable || (describeUnusable && keypoints.length > 0)
    ? {
        version: TEMPLATE_VERSION,
        width: image.width,
        height: image.height,
        quality: quality.score,
        keypoints: packed,
        descriptors,
        genericness: keypointGenericness(descriptorFrame(descriptors, keypoints.length, 0)),
        searchKey: computeSearchKey(keypoints.length, descriptors),
      }
    : null;
  const t3 = performance.now();
  const views = turnedViews && template ? allQuarterTurns(TurnableImage.fromExtraction(template, levels)) : null;
  return { ok: true, quality, template, turnedViews: views, timings: { decodeMs: t1 - t0, featuresMs: t2 - t1, turnedViewsMs: performance.now() - t3 } };
}
