import { describe, expect, it } from "vitest";
import { dashboardFiguresSchema } from "@/lib/engine-figures";
import { buildDashboardFigures } from "./dashboard-figures";

const headline = { dataset: "test", threshold: 40, eer: 0.1, fnmrAtFmr: [] };

describe("buildDashboardFigures", () => {
  it("bins every score once and keeps a drawable, thinned DET curve", () => {
    const genuine = Array.from({ length: 300 }, (_, i) => 30 + (i % 70));
    const impostor = Array.from({ length: 5000 }, (_, i) => (i * 7) % 45);
    const figures = buildDashboardFigures(genuine, impostor, headline, "2026-01-01T00:00:00Z");
    expect(figures.histogram).toHaveLength(50);
    expect(figures.histogram.reduce((n, b) => n + b.genuine, 0)).toBe(genuine.length);
    expect(figures.histogram.reduce((n, b) => n + b.impostor, 0)).toBe(impostor.length);
    expect(figures.histogram[0]).toMatchObject({ from: 0, to: 2 });
    expect(figures.det.length).toBeGreaterThan(2);
    expect(figures.det.length).toBeLessThanOrEqual(201);
    for (const p of figures.det) expect(p.fmr > 0 && p.fnmr > 0 && Number.isFinite(p.threshold)).toBe(true);
    // Ascending threshold: FMR falls, FNMR rises.
    for (let i = 1; i < figures.det.length; i++) {
      expect(figures.det[i].fmr).toBeLessThanOrEqual(figures.det[i - 1].fmr);
      expect(figures.det[i].fnmr).toBeGreaterThanOrEqual(figures.det[i - 1].fnmr);
    }
    expect(dashboardFiguresSchema.parse(figures)).toEqual(figures);
  });
});
