import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildDashboardFigures, dashboardFiguresSchema } from "./dashboard-figures";

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

  it("the published figures the dashboard reads are a valid run", () => {
    const published = JSON.parse(fs.readFileSync(path.join("docs", "figures", "evaluation.json"), "utf8"));
    const figures = dashboardFiguresSchema.parse(published);
    expect(figures.histogram.reduce((n, b) => n + b.impostor, 0)).toBe(figures.impostorComparisons);
    expect(figures.histogram.reduce((n, b) => n + b.genuine, 0)).toBe(figures.genuineComparisons);
    // A DET point needs both error rates above zero: a run with no overlap (EER 0) has none to draw.
    if (figures.eer > 0) expect(figures.det.length).toBeGreaterThan(0);
    else expect(Math.min(...figures.histogram.filter((b) => b.genuine > 0).map((b) => b.from))).toBeGreaterThanOrEqual(
      Math.max(...figures.histogram.filter((b) => b.impostor > 0).map((b) => b.from)),
    );
  });
});
