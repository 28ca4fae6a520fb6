/**
 * Dependency-free SVG charts for evaluation reports: DET curves and genuine/impostor
 * score histograms. Output is a standalone SVG document string.
 */
import { histogram, type DetPoint } from "./metrics";

export interface DetSeries {
  name: string;
  /** Ascending by threshold, as returned by computeDet. */
  points: readonly DetPoint[];
  /** Decision threshold to mark on this series; overrides DetCurveOptions.threshold. */
  threshold?: number;
}

export interface DetCurveOptions {
  title: string;
  /** Decision threshold to mark on every series that has none of its own. */
  threshold?: number;
  width?: number;
  height?: number;
}

export interface ScoreHistogramInput {
  genuine: readonly number[];
  impostor: readonly number[];
  threshold?: number;
  title?: string;
  bins?: number;
  /** Log count axis: lets a handful of high-scoring impostors show next to a huge mass at 0. */
  logCount?: boolean;
  /** Score range; defaults to the range of all scores. */
  min?: number;
  max?: number;
  width?: number;
  height?: number;
}

const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
const GENUINE_COLOR = "#2ca02c";
const IMPOSTOR_COLOR = "#d62728";
const MARGIN = { left: 72, right: 20, top: 40, bottom: 56 };
// The log axes never reach below 10^LOWEST_DECADE, however many comparisons there are.
const LOWEST_DECADE = -8;
// Integer scores (e.g. inlier counts) spanning at most this many values get one bin per value.
const MAX_INTEGER_BINS = 200;

interface Frame {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

interface LogAxis {
  lowDecade: number;
  highDecade: number;
}

/** DET curve (FMR on x, FNMR on y, both log10) for one system or several named ones. */
export function detCurveSvg(input: readonly DetPoint[] | readonly DetSeries[], options: DetCurveOptions): string {
  const series = toSeries(input);
  const frame = makeFrame(options.width ?? 640, options.height ?? 520);
  // A zero rate has no place on a log axis, so such points are left out of the curves.
  const plotted = series.map((s) => s.points.filter((p) => p.fmr > 0 && p.fnmr > 0));
  const xAxis = logAxisFor(plotted.flatMap((points) => points.map((p) => p.fmr)));
  const yAxis = logAxisFor(plotted.flatMap((points) => points.map((p) => p.fnmr)));
  const x = (rate: number) => logPosition(rate, xAxis, frame.left, frame.right);
  const y = (rate: number) => logPosition(rate, yAxis, frame.bottom, frame.top);

  const parts: string[] = [
    svgOpen(frame, options.title),
    ...logGrid(xAxis, "x", frame, x),
    ...logGrid(yAxis, "y", frame, y),
    plotBox(frame),
    axisLabels(frame, "False match rate (FMR)", "False non-match rate (FNMR)"),
  ];
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length];
    const coords = simplifyPolyline(plotted[i].map((p) => [x(p.fmr), y(p.fnmr)] as const));
    parts.push(
      `<polyline data-series="${escapeXml(s.name)}" fill="none" stroke="${color}" stroke-width="2" points="${coords
        .map(([px, py]) => `${px},${py}`)
        .join(" ")}"/>`,
    );
    const threshold = s.threshold ?? options.threshold;
    if (threshold !== undefined) parts.push(thresholdMarker(s.points, threshold, color, x, y));
  });
  parts.push(legend(series.map((s, i) => ({ label: s.name, color: PALETTE[i % PALETTE.length] })), frame));
  parts.push("</svg>");
  return parts.join("\n");
}

/** Overlaid genuine and impostor score histograms, optionally on a log count axis. */
export function scoreHistogramSvg(input: ScoreHistogramInput): string {
  const { genuine, impostor, threshold, logCount = false } = input;
  const { min, max, bins } = binning(input);
  const genuineHist = histogram(genuine, { min, max, bins });
  const impostorHist = histogram(impostor, { min, max, bins });
  const frame = makeFrame(input.width ?? 640, input.height ?? 420);
  const title = input.title ?? "Score distributions";

  const peak = Math.max(1, ...genuineHist.counts, ...impostorHist.counts);
  const x = (score: number) => round1(frame.left + ((score - min) / (max - min)) * (frame.right - frame.left));
  const countScale = logCount ? logCountScale(peak, frame) : linearCountScale(peak, frame);
  const y = countScale.position;

  const parts: string[] = [svgOpen(frame, title)];
  for (const tick of ticksWithin(min, max, niceStep(max - min))) {
    parts.push(gridLine("x", x(tick), frame, formatNumber(tick), false));
  }
  for (const tick of countScale.ticks) parts.push(gridLine("y", y(tick), frame, formatCount(tick), false));
  parts.push(plotBox(frame), axisLabels(frame, "Score", logCount ? "Count (log)" : "Count"));

  const drawn = [
    { name: "impostor", hist: impostorHist, scores: impostor, color: IMPOSTOR_COLOR },
    { name: "genuine", hist: genuineHist, scores: genuine, color: GENUINE_COLOR },
  ];
  for (const { name, hist, color } of drawn) {
    parts.push(
      `<path data-series="${name}" d="${histogramPath(hist.edges, hist.counts, x, y, frame.bottom)}" fill="${color}" fill-opacity="0.35" stroke="${color}" stroke-width="1.5"/>`,
    );
  }
  if (threshold !== undefined && threshold >= min && threshold <= max) {
    const tx = x(threshold);
    parts.push(
      `<line class="threshold" x1="${tx}" y1="${frame.top}" x2="${tx}" y2="${frame.bottom}" stroke="#000" stroke-dasharray="6 4" stroke-width="1.5"/>`,
      `<text x="${tx + 4}" y="${frame.top + 14}" font-size="11">threshold ${escapeXml(formatNumber(threshold))}</text>`,
    );
  }
  parts.push(
    legend(
      drawn.map(({ name, hist, scores, color }) => {
        const outside = hist.underflow + hist.overflow;
        return { label: `${name} (n=${scores.length}${outside ? `, ${outside} outside range` : ""})`, color };
      }),
      frame,
    ),
  );
  parts.push("</svg>");
  return parts.join("\n");
}

function toSeries(input: readonly DetPoint[] | readonly DetSeries[]): readonly DetSeries[] {
  const first = input[0];
  if (first === undefined) throw new RangeError("detCurveSvg needs at least one point or series");
  return "points" in first ? (input as readonly DetSeries[]) : [{ name: "system", points: input as readonly DetPoint[] }];
}

function makeFrame(width: number, height: number): Frame {
  return {
    width,
    height,
    left: MARGIN.left,
    right: width - MARGIN.right,
    top: MARGIN.top,
    bottom: height - MARGIN.bottom,
  };
}

function logAxisFor(rates: readonly number[]): LogAxis {
  let lowest = Infinity;
  for (const r of rates) if (r > 0 && r < lowest) lowest = r;
  const lowDecade = Number.isFinite(lowest) ? Math.max(LOWEST_DECADE, Math.floor(Math.log10(lowest))) : -3;
  return { lowDecade: Math.min(lowDecade, -1), highDecade: 0 };
}

function logPosition(value: number, axis: LogAxis, from: number, to: number): number {
  const decade = value > 0 ? Math.log10(value) : axis.lowDecade;
  const clamped = Math.min(axis.highDecade, Math.max(axis.lowDecade, decade));
  return round1(from + ((clamped - axis.lowDecade) / (axis.highDecade - axis.lowDecade)) * (to - from));
}

/** Labelled decade lines plus unlabelled 2..9 minor lines. */
function logGrid(axis: LogAxis, direction: "x" | "y", frame: Frame, position: (rate: number) => number): string[] {
  const lines: string[] = [];
  for (const decade of range(axis.lowDecade, axis.highDecade)) {
    lines.push(gridLine(direction, position(10 ** decade), frame, formatRate(decade), false));
    if (decade === axis.highDecade) continue;
    for (let m = 2; m <= 9; m++) lines.push(gridLine(direction, position(m * 10 ** decade), frame, "", true));
  }
  return lines;
}

function gridLine(direction: "x" | "y", at: number, frame: Frame, label: string, minor: boolean): string {
  const stroke = minor ? `stroke="#eee"` : `stroke="#ccc"`;
  if (direction === "x") {
    const line = `<line x1="${at}" y1="${frame.top}" x2="${at}" y2="${frame.bottom}" ${stroke}/>`;
    return label
      ? `${line}\n<text x="${at}" y="${frame.bottom + 16}" text-anchor="middle" font-size="11">${escapeXml(label)}</text>`
      : line;
  }
  const line = `<line x1="${frame.left}" y1="${at}" x2="${frame.right}" y2="${at}" ${stroke}/>`;
  return label
    ? `${line}\n<text x="${frame.left - 6}" y="${at + 4}" text-anchor="end" font-size="11">${escapeXml(label)}</text>`
    : line;
}

function svgOpen(frame: Frame, title: string): string {
  const { width, height } = frame;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
  ].join("\n");
}

function plotBox(frame: Frame): string {
  return `<rect x="${frame.left}" y="${frame.top}" width="${frame.right - frame.left}" height="${frame.bottom - frame.top}" fill="none" stroke="#333"/>`;
}

function axisLabels(frame: Frame, xLabel: string, yLabel: string): string {
  const midX = (frame.left + frame.right) / 2;
  const midY = (frame.top + frame.bottom) / 2;
  return [
    `<text x="${midX}" y="${frame.height - 14}" text-anchor="middle" font-size="12">${escapeXml(xLabel)}</text>`,
    `<text x="16" y="${midY}" text-anchor="middle" font-size="12" transform="rotate(-90 16 ${midY})">${escapeXml(yLabel)}</text>`,
  ].join("\n");
}

function legend(entries: readonly { label: string; color: string }[], frame: Frame): string {
  const rows = entries.map(({ label, color }, i) => {
    const y = frame.top + 16 + i * 18;
    return [
      `<rect x="${frame.right - 210}" y="${y - 9}" width="14" height="10" fill="${color}"/>`,
      `<text x="${frame.right - 190}" y="${y}" font-size="12">${escapeXml(label)}</text>`,
    ].join("\n");
  });
  return `<g class="legend">\n${rows.join("\n")}\n</g>`;
}

/**
 * The operating point for "accept when score >= threshold" is the first DET point
 * at or above the threshold, since rates only change at observed scores.
 */
function thresholdMarker(
  points: readonly DetPoint[],
  threshold: number,
  color: string,
  x: (rate: number) => number,
  y: (rate: number) => number,
): string {
  const point = points.find((p) => p.threshold >= threshold) ?? points.at(-1)!;
  const px = x(point.fmr);
  const py = y(point.fnmr);
  const label = `t=${formatNumber(threshold)}: FMR ${formatPercent(point.fmr)}, FNMR ${formatPercent(point.fnmr)}`;
  return [
    `<circle class="threshold" cx="${px}" cy="${py}" r="5" fill="none" stroke="${color}" stroke-width="2"/>`,
    `<text x="${px + 8}" y="${py - 8}" font-size="11" fill="${color}">${escapeXml(label)}</text>`,
  ].join("\n");
}

/**
 * A DET over 10^6 impostors has ~10^6 points, nearly all on horizontal or vertical
 * runs; keeping only run ends makes the SVG small without changing the drawing.
 */
function simplifyPolyline(coords: readonly (readonly [number, number])[]): (readonly [number, number])[] {
  const kept: (readonly [number, number])[] = [];
  for (const c of coords) {
    const last = kept.at(-1);
    if (last && last[0] === c[0] && last[1] === c[1]) continue;
    const beforeLast = kept.at(-2);
    if (
      last &&
      beforeLast &&
      ((beforeLast[0] === last[0] && last[0] === c[0]) || (beforeLast[1] === last[1] && last[1] === c[1]))
    ) {
      kept[kept.length - 1] = c;
    } else {
      kept.push(c);
    }
  }
  return kept;
}

function histogramPath(
  edges: readonly number[],
  counts: readonly number[],
  x: (score: number) => number,
  y: (count: number) => number,
  baseline: number,
): string {
  const steps = counts.map((count, i) => `H${x(edges[i])}V${y(count)}H${x(edges[i + 1])}`);
  return `M${x(edges[0])},${baseline}${steps.join("")}V${baseline}Z`;
}

function binning({ genuine, impostor, min, max, bins }: ScoreHistogramInput): { min: number; max: number; bins: number } {
  let lo = Infinity;
  let hi = -Infinity;
  let allIntegers = true;
  for (const scores of [genuine, impostor]) {
    for (const s of scores) {
      if (s < lo) lo = s;
      if (s > hi) hi = s;
      if (!Number.isInteger(s)) allIntegers = false;
    }
  }
  lo = min ?? lo;
  hi = max ?? hi;
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) throw new RangeError("no scores to plot and no min/max given");
  // Fractional bins over integer scores would leave every other bin empty.
  if (allIntegers && bins === undefined && min === undefined && max === undefined && hi - lo < MAX_INTEGER_BINS) {
    return { min: lo - 0.5, max: hi + 0.5, bins: hi - lo + 1 };
  }
  // A single distinct score still needs a non-empty axis.
  return hi > lo ? { min: lo, max: hi, bins: bins ?? 40 } : { min: lo - 0.5, max: hi + 0.5, bins: bins ?? 40 };
}

interface CountScale {
  position: (count: number) => number;
  ticks: number[];
}

function linearCountScale(peak: number, frame: Frame): CountScale {
  const step = niceStep(peak);
  const top = Math.ceil(peak / step) * step;
  return {
    position: (count) => round1(frame.bottom - (count / top) * (frame.bottom - frame.top)),
    ticks: ticksWithin(0, top, step),
  };
}

/** The baseline sits at half a count so that bins holding a single score still get a visible bar. */
function logCountScale(peak: number, frame: Frame): CountScale {
  const axis: LogAxis = { lowDecade: Math.log10(0.5), highDecade: Math.max(1, Math.ceil(Math.log10(peak))) };
  return {
    position: (count) => (count === 0 ? frame.bottom : logPosition(count, axis, frame.bottom, frame.top)),
    ticks: range(0, axis.highDecade).map((d) => 10 ** d),
  };
}

/** 1, 2 or 5 times a power of ten, giving about five ticks over the span. */
function niceStep(span: number): number {
  const rough = span / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough * (1 - 1e-9))!;
}

function ticksWithin(lo: number, hi: number, step: number): number[] {
  const ticks: number[] = [];
  const slack = step * 1e-9;
  for (let i = Math.ceil((lo - slack) / step); i * step <= hi + slack; i++) {
    ticks.push(Number((i * step).toPrecision(12)));
  }
  return ticks;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function formatRate(decade: number): string {
  return `${Number((10 ** (decade + 2)).toPrecision(1))}%`;
}

function formatPercent(rate: number): string {
  return `${Number((rate * 100).toPrecision(3))}%`;
}

function formatCount(count: number): string {
  return count >= 10_000 ? count.toExponential().replace("e+", "e") : String(count);
}

function formatNumber(value: number): string {
  return String(Number(value.toPrecision(6)));
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&${{ "<": "lt", ">": "gt", "&": "amp", '"': "quot", "'": "apos" }[c]};`);
}
