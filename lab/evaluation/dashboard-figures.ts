import type { DashboardFigures } from "@/lib/engine-figures";
import { computeDet, histogram } from "./metrics";

// The figures of one evaluation run in the form the dashboard's charts draw (lib/engine-figures.ts);
// `npm run eval -- DIR --publish` writes them to lib/engine-figures.json.

const HISTOGRAM_BINS = 50;
const MAX_DET_POINTS = 200;

export function buildDashboardFigures(
  genuine: readonly number[],
  impostor: readonly number[],
  headline: Pick<DashboardFigures, "dataset" | "threshold" | "eer" | "fnmrAtFmr">,
  generatedAt = new Date().toISOString(),
): DashboardFigures {
  const range = { min: 0, max: 100, bins: HISTOGRAM_BINS };
  const g = histogram(genuine, range);
  const im = histogram(impostor, range);
  // DET on log axes: only the points with both rates above zero can be drawn; keep an even spread.
  const drawable = computeDet(genuine, impostor).filter((p) => Number.isFinite(p.threshold) && p.fmr > 0 && p.fnmr > 0);
  const step = Math.max(1, Math.ceil(drawable.length / MAX_DET_POINTS));
  const det = drawable.filter((_, i) => i % step === 0 || i === drawable.length - 1);
  return {
    ...headline,
    generatedAt,
    genuineComparisons: genuine.length,
    impostorComparisons: impostor.length,
    histogram: g.counts.map((count, i) => ({ from: g.edges[i], to: g.edges[i + 1], genuine: count, impostor: im.counts[i] })),
    det,
  };
}
