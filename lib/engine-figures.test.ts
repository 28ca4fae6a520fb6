import { describe, expect, it } from "vitest";
import { publishedEngineFigures } from "./engine-figures";

describe("published engine figures", () => {
  it("are a valid run the dashboard can draw", () => {
    const figures = publishedEngineFigures();
    expect(figures.histogram.reduce((n, b) => n + b.impostor, 0)).toBe(figures.impostorComparisons);
    expect(figures.histogram.reduce((n, b) => n + b.genuine, 0)).toBe(figures.genuineComparisons);
    // A DET point needs both error rates above zero: a run with no overlap (EER 0) has none to draw.
    if (figures.eer > 0) expect(figures.det.length).toBeGreaterThan(0);
    else expect(Math.min(...figures.histogram.filter((b) => b.genuine > 0).map((b) => b.from))).toBeGreaterThanOrEqual(
      Math.max(...figures.histogram.filter((b) => b.impostor > 0).map((b) => b.from)),
    );
  });
});
