import { z } from "zod";
import published from "./engine-figures.json";

// The engine's published evaluation figures, the one thing of the lab the product reads: the
// dashboard's usage page draws them. `npm run eval -- DIR --publish` (lab/evaluation/
// dashboard-figures.ts) writes ./engine-figures.json; it is committed so that the charts show the run
// the docs describe (docs/dashboard.md).

/**
 * One evaluation run in the compact form the manager's charts draw: score histograms of genuine and
 * impostor comparisons, the DET curve (thinned), the headline figures and the decision threshold.
 */
export const dashboardFiguresSchema = z.object({
  generatedAt: z.string(),
  dataset: z.string(),
  threshold: z.number(),
  genuineComparisons: z.number(),
  impostorComparisons: z.number(),
  eer: z.number(),
  fnmrAtFmr: z.array(z.object({ fmr: z.number(), fnmr: z.number(), threshold: z.number() })),
  histogram: z.array(z.object({ from: z.number(), to: z.number(), genuine: z.number(), impostor: z.number() })),
  det: z.array(z.object({ threshold: z.number(), fmr: z.number(), fnmr: z.number() })),
});

export type DashboardFigures = z.infer<typeof dashboardFiguresSchema>;

/** Where `npm run eval -- DIR --publish` writes the figures (relative to the repository root). */
export const PUBLISHED_FIGURES_PATH = "lib/engine-figures.json";

/** The latest published evaluation run. */
export function publishedEngineFigures(): DashboardFigures {
  return dashboardFiguresSchema.parse(published);
}
