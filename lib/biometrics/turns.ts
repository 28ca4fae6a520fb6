import { decodeNoseImage } from "./decode";
import { keypointGenericness } from "./distinctiveness";
import { normaliseContrast } from "./enhance";
import { buildScaleSpace, describeInFrames, descriptorFrame, type ScaleLevel } from "./features";
import { DESCRIPTOR_ANGLES_DEG, DETECTION_SIGMAS, MATCHED_SETS } from "./parameters";
import type { TurnableProbe } from "./session-matcher";
import { KEYPOINT_FIELDS, keypointCount, strongestKeypoints, type NoseTemplate } from "./template";

/**
 * The quarter turns a probe image is also tried at (degrees, decision 0029): with the matcher's own reach of ± 40°
 * about each, a nose photographed at any roll meets an enrolled image within 45° of one of them.
 */
export const QUARTER_TURNS: readonly number[] = [90, 180, 270];

const NO_SEARCH_KEY = { words: new Uint16Array(0), signatures: new Uint32Array(0), angles: new Uint8Array(0) };

/**
 * A probe image that can be looked at turned: its template's keypoints described again, from the image's scale
 * space, in frames turned by a quarter turn more than the template's own. `view(turn)` is the template the image
 * turned by `turn` would give (keypoints found once, on the upright image: a quarter turn maps the detector's pixel
 * grid onto itself), so the matcher compares it with enrolled templates unchanged.
 */
export class TurnableImage {
  private readonly views = new Map<string, NoseTemplate>();

  private constructor(
    private readonly template: NoseTemplate,
    private readonly levels: ScaleLevel[],
  ) {}

  /**
   * The image's scale space rebuilt from its JPEG (the extraction's own steps, so the same levels), or null when the
   * bytes no longer decode to the template's size (another image, or another engine's template).
   */
  static async of(jpeg: Uint8Array, template: NoseTemplate): Promise<TurnableImage | null> {
    let image;
    try {
      ({ image } = await decodeNoseImage(jpeg));
    } catch {
      return null;
    }
    if (image.width !== template.width || image.height !== template.height) return null;
    return new TurnableImage(template, buildScaleSpace(normaliseContrast(image), false));
  }

  /** The image whose extraction just made `template` in `levels` (extract.ts): its scale space, not rebuilt. */
  static fromExtraction(template: NoseTemplate, levels: ScaleLevel[]): TurnableImage {
    return new TurnableImage(template, levels);
  }

  /**
   * The template of the image turned by `turnDeg` (a multiple of 90), on its `limit` strongest keypoints: positions
   * turned about the image's centre, descriptors in the matched frames plus the turn, genericness measured again in
   * the new upright frame. No search key. Computed once per turn and limit.
   */
  view(turnDeg: number, limit = Infinity): NoseTemplate {
    const count = Math.min(keypointCount(this.template), limit);
    const key = `${turnDeg}:${count}`;
    let view = this.views.get(key);
    if (!view) {
      view = turnedView(this.template, this.levels, turnDeg, count);
      this.views.set(key, view);
    }
    return view;
  }
}

function levelOf(sigma: number): number {
  let best = 0;
  for (let level = 1; level < DETECTION_SIGMAS.length; level++) {
    if (Math.abs(DETECTION_SIGMAS[level] - sigma) < Math.abs(DETECTION_SIGMAS[best] - sigma)) best = level;
  }
  return best;
}

function turnedView(template: NoseTemplate, levels: ScaleLevel[], turnDeg: number, count: number): NoseTemplate {
  const source = template.keypoints;
  const keypoints = Array.from({ length: count }, (_, k) => ({
    x: source[k * KEYPOINT_FIELDS],
    y: source[k * KEYPOINT_FIELDS + 1],
    sigma: source[k * KEYPOINT_FIELDS + 2],
    level: levelOf(source[k * KEYPOINT_FIELDS + 2]),
  }));
  // A patch sampled at angle θ reads the image along axes turned by θ (patches.ts): the view is the image turned by
  // −θ, so a keypoint at p lies at c' + R(−θ)(p − c), c and c' the centres before and after.
  const theta = (turnDeg * Math.PI) / 180;
  const cos = Math.round(Math.cos(theta));
  const sin = Math.round(Math.sin(theta));
  const odd = Math.abs(sin) === 1;
  const width = odd ? template.height : template.width;
  const height = odd ? template.width : template.height;
  const cx = (template.width - 1) / 2;
  const cy = (template.height - 1) / 2;
  const packed = new Float32Array(count * KEYPOINT_FIELDS);
  keypoints.forEach((k, i) => {
    const dx = k.x - cx;
    const dy = k.y - cy;
    packed[i * KEYPOINT_FIELDS] = (width - 1) / 2 + dx * cos + dy * sin;
    packed[i * KEYPOINT_FIELDS + 1] = (height - 1) / 2 - dx * sin + dy * cos;
    packed[i * KEYPOINT_FIELDS + 2] = k.sigma;
  });
  const angles = DESCRIPTOR_ANGLES_DEG.slice(0, MATCHED_SETS).map((angle) => angle + turnDeg);
  const descriptors = describeInFrames(levels, keypoints, angles);
  return {
    version: template.version,
    width,
    height,
    quality: template.quality,
    keypoints: packed,
    descriptors,
    genericness: keypointGenericness(descriptorFrame(descriptors, count, 0)),
    searchKey: NO_SEARCH_KEY,
  };
}

/**
 * A probe image's full views at every QUARTER_TURNS turn (in that order), or null when its JPEG does not give its
 * template back (`TurnableImage.of`): what a 1:N search turns its probe with, computed once and shared by its workers.
 */
export async function quarterTurnViews(jpeg: Uint8Array, template: NoseTemplate): Promise<NoseTemplate[] | null> {
  const image = await TurnableImage.of(jpeg, template);
  return image ? allQuarterTurns(image) : null;
}

/** The image's full views at every QUARTER_TURNS turn, in that order. */
export function allQuarterTurns(image: TurnableImage): NoseTemplate[] {
  return QUARTER_TURNS.map((turn) => image.view(turn));
}

/**
 * Views computed already (`quarterTurnViews`), as a turnable probe: a view cut to its strongest keypoints is the view
 * `TurnableImage` would describe for them (each keypoint's descriptors and genericness are its own).
 */
export function turnableFromViews(views: readonly NoseTemplate[]): TurnableProbe {
  return {
    view(turnDeg, limit = Infinity) {
      const full = views[QUARTER_TURNS.indexOf(turnDeg)];
      if (!full) throw new Error(`no view turned by ${turnDeg}°`);
      return strongestKeypoints(full, limit);
    },
  };
}
