import { describe, expect, it } from "vitest";
import { computeDet } from "./metrics";
import { detCurveSvg, scoreHistogramSvg } from "./plots";

/** Minimal well-formedness check: balanced tags, one <svg> root, quoted attributes, escaped text. */
function expectWellFormedSvg(svg: string): void {
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  const open: string[] = [];
  let roots = 0;
  let cursor = 0;
  for (const match of svg.matchAll(tag)) {
    const text = svg.slice(cursor, match.index);
    expect(text, "stray markup or unescaped text").not.toMatch(/[<>]|&(?!(lt|gt|amp|quot|apos);)/);
    cursor = match.index + match[0].length;
    const [, closing, name, , selfClosing] = match;
    if (closing) {
      expect(open.pop(), `closing </${name}>`).toBe(name);
    } else {
      if (open.length === 0) roots++;
      if (!selfClosing) open.push(name);
    }
  }
  expect(svg.slice(cursor).trim()).toBe("");
  expect(open).toEqual([]);
  expect(roots).toBe(1);
  expect(svg.startsWith("<svg ")).toBe(true);
}

const genuine = [0.95, 0.9, 0.8, 0.7, 0.4];
const impostor = [0, 0, 0, 0.1, 0.2, 0.3, 0.5, 0.75];

describe("detCurveSvg", () => {
  it("draws a single system with the threshold marked", () => {
    const svg = detCurveSvg(computeDet(genuine, impostor), { title: "Nose <A&B>", threshold: 0.7 });
    expectWellFormedSvg(svg);
    expect(svg).toContain("Nose &lt;A&amp;B&gt;");
    expect(svg).toContain('data-series="system"');
    // At t=0.7 one of 8 impostors (0.75) is accepted and one of 5 genuines (0.4) rejected.
    expect(svg).toContain("t=0.7: FMR 12.5%, FNMR 20%");
    expect(svg).toContain(">10%</text>");
  });

  it("draws several named series for comparing systems", () => {
    const svg = detCurveSvg(
      [
        { name: "engine", points: computeDet(genuine, impostor), threshold: 0.6 },
        { name: "SIFT peer", points: computeDet([30, 12, 4, 2], [0, 0, 1, 3, 4]) },
      ],
      { title: "Engine vs peer" },
    );
    expectWellFormedSvg(svg);
    expect(svg).toContain('data-series="engine"');
    expect(svg).toContain('data-series="SIFT peer"');
    expect(svg.match(/class="threshold"/g)).toHaveLength(1);
  });

  it("keeps a million-impostor curve small", () => {
    const many = Array.from({ length: 1_000_000 }, (_, i) => i / 1_000_000);
    const svg = detCurveSvg(computeDet([0.5, 0.99, 0.999], many), { title: "large" });
    expectWellFormedSvg(svg);
    expect(svg.length).toBeLessThan(200_000);
  });

  it("rejects empty input", () => {
    expect(() => detCurveSvg([], { title: "empty" })).toThrow(RangeError);
  });
});

describe("scoreHistogramSvg", () => {
  it("overlays genuine and impostor histograms with the threshold line", () => {
    const svg = scoreHistogramSvg({ genuine, impostor, threshold: 0.6, bins: 10 });
    expectWellFormedSvg(svg);
    expect(svg).toContain('data-series="genuine"');
    expect(svg).toContain('data-series="impostor"');
    expect(svg).toContain("threshold 0.6");
    expect(svg).toContain("genuine (n=5)");
  });

  it("supports a log count axis and reports scores outside a fixed range", () => {
    const svg = scoreHistogramSvg({ genuine, impostor, logCount: true, min: 0.1, max: 1, title: "log" });
    expectWellFormedSvg(svg);
    expect(svg).toContain("Count (log)");
    expect(svg).toContain("impostor (n=8, 3 outside range)");
  });

  it("copes with every score being identical", () => {
    expectWellFormedSvg(scoreHistogramSvg({ genuine: [0, 0], impostor: [0, 0, 0] }));
  });
});
