// Statistics of a set of crops beside those of real dog-nose crops (../shared/REAL-DATA.md): the
// yardstick of the "real" generator setting. The per-crop measures are computed by OpenCV itself
// (lab/scripts/synth/crop_stats.py) so that SIFT, CLAHE, Laplacian and HSV are exactly the definitions'.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const SCRIPTS = fileURLToPath(new URL("../scripts/", import.meta.url));
const ENSURE_OPENCV = `${SCRIPTS}peer/ensure-python-opencv.sh`;
const MEASURE_SCRIPT = `${SCRIPTS}synth/crop_stats.py`;
// Debian's interpreter, which python3-opencv installs into; the python3 on PATH may be another one.
const DEBIAN_PYTHON = "/usr/bin/python3";
const run = promisify(execFile);

export const CROP_MEASURES = [
  "size",
  "sharpness320",
  "sharpness",
  "brightness",
  "contrast",
  "padBrightness",
  "padContrast",
  "padColour",
  "glare",
  "wetHighlights",
  "keypoints",
  "keypointsClahe",
  "keypointSize",
] as const;

export type CropMeasure = (typeof CROP_MEASURES)[number];

/** 5 / 25 / 50 / 75 / 95 % points. */
export type Quantiles = readonly [number, number, number, number, number];

export const QUANTILE_LEVELS = [0.05, 0.25, 0.5, 0.75, 0.95] as const;

/** The real crops' figures, as REAL-DATA.md gives them (fractions, not %, for glare and wet highlights). */
export const REAL_CROP_STATS: Record<CropMeasure, { label: string; quantiles: Quantiles }> = {
  size: { label: "crop size (px, longer side)", quantiles: [150, 185, 224, 277, 405] },
  sharpness320: { label: "sharpness at 320 px", quantiles: [6.5, 20, 50, 136, 490] },
  sharpness: { label: "sharpness, original size", quantiles: [18, 71, 175, 465, 1738] },
  brightness: { label: "brightness", quantiles: [41, 56, 69, 83, 116] },
  contrast: { label: "contrast", quantiles: [25, 37, 46, 54, 66] },
  padBrightness: { label: "pad brightness", quantiles: [23, 34, 47, 65, 107] },
  padContrast: { label: "pad contrast", quantiles: [14, 22, 29, 38, 51] },
  padColour: { label: "pad colour (HSV S)", quantiles: [24, 42, 59, 83, 127] },
  glare: { label: "glare (grey ≥ 240)", quantiles: [0, 0, 0, 0.0005, 0.021] },
  wetHighlights: { label: "wet highlights", quantiles: [0, 0, 0.0004, 0.008, 0.054] },
  keypoints: { label: "SIFT keypoints", quantiles: [19, 119, 354, 761, 1665] },
  keypointsClahe: { label: "SIFT keypoints after CLAHE", quantiles: [166, 617, 1149, 1821, 2864] },
  keypointSize: { label: "keypoint size (median)", quantiles: [2.2, 2.5, 3.0, 4.0, 10.3] },
};

const cropRecordSchema = z.object({
  file: z.string(),
  shortSide: z.number(),
  ...(Object.fromEntries(CROP_MEASURES.map((m) => [m, z.number()])) as Record<CropMeasure, z.ZodNumber>),
  // SIFT finds nothing on a flat crop: it has no keypoint size.
  keypointSize: z.number().nullable(),
});

export type CropRecord = z.infer<typeof cropRecordSchema>;

export interface MeasureOptions {
  workers?: number;
  /** Measure at most this many crops, evenly spread over the sorted file list. */
  limit?: number;
}

/** Measures every crop under `dir` (recursively). Throws on an unreadable crop. */
export async function measureCrops(dir: string, options: MeasureOptions = {}): Promise<CropRecord[]> {
  await run("bash", [ENSURE_OPENCV]);
  const args = [MEASURE_SCRIPT, dir, "--workers", String(options.workers ?? 1)];
  if (options.limit) args.push("--limit", String(options.limit));
  const { stdout } = await run(DEBIAN_PYTHON, args, { maxBuffer: 1 << 30 });
  const records: CropRecord[] = [];
  for (const line of stdout.split("\n")) {
    if (line.trim() === "") continue;
    const raw = JSON.parse(line) as { file?: string; error?: string };
    if (raw.error) throw new Error(`cannot measure ${raw.file}: ${raw.error}`);
    records.push(cropRecordSchema.parse(raw));
  }
  return records;
}

/** Linear-interpolated quantile of sorted values (numpy's default). */
export function quantile(sorted: readonly number[], level: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * level;
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below);
}

export interface MeasureSummary {
  measure: CropMeasure;
  label: string;
  set: Quantiles;
  real: Quantiles;
  /** The set's median lies within the real interquartile range. */
  medianWithinRealIqr: boolean;
}

export function summarise(records: readonly CropRecord[]): MeasureSummary[] {
  return CROP_MEASURES.map((measure) => {
    const values = records
      .map((r) => r[measure])
      .filter((v): v is number => v !== null)
      .sort((a, b) => a - b);
    const set = QUANTILE_LEVELS.map((level) => quantile(values, level)) as unknown as Quantiles;
    const real = REAL_CROP_STATS[measure].quantiles;
    return {
      measure,
      label: REAL_CROP_STATS[measure].label,
      set,
      real,
      medianWithinRealIqr: set[2] >= real[1] && set[2] <= real[3],
    };
  });
}

function formatValue(measure: CropMeasure, value: number): string {
  if (Number.isNaN(value)) return "–";
  if (measure === "glare" || measure === "wetHighlights") return `${(value * 100).toFixed(2)}%`;
  if (Math.abs(value) >= 100) return value.toFixed(0);
  return value.toFixed(1);
}

/** A Markdown table: each measure's set quantiles, real quantiles, and whether the median fits. */
export function formatSummary(summaries: readonly MeasureSummary[], crops: number): string {
  const header = "| measure | set 5 / 25 / 50 / 75 / 95 % | real 5 / 25 / 50 / 75 / 95 % | median in real IQR |";
  const lines = [header, "|---|---|---|---|"];
  for (const s of summaries) {
    const fmt = (q: Quantiles) => q.map((v) => formatValue(s.measure, v)).join(" / ");
    lines.push(`| ${s.label} | ${fmt(s.set)} | ${fmt(s.real)} | ${s.medianWithinRealIqr ? "yes" : "**no**"} |`);
  }
  const matched = summaries.filter((s) => s.medianWithinRealIqr).length;
  lines.push("", `${crops} crops; ${matched} of ${summaries.length} medians within the real interquartile range.`);
  return lines.join("\n");
}
