"use client";

import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ReferenceDot,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { EmptyState } from "@/components/dashboard/ui";

const PALETTE = ["#0f766e", "#1d4ed8", "#b45309", "#7c3aed", "#be123c", "#4d7c0f"];
const GENUINE = "#047857";
const IMPOSTOR = "#b91c1c";

function Frame({ children, testId }: { children: React.ReactElement; testId: string }) {
  return (
    <div className="h-72 w-full" data-testid={testId}>
      <ResponsiveContainer width="100%" height="100%">
        {children}
      </ResponsiveContainer>
    </div>
  );
}

export function CallsByDayChart({ data, keys }: { data: Record<string, string | number>[]; keys: string[] }) {
  if (keys.length === 0) return <EmptyState title="No API calls in this period" />;
  return (
    <Frame testId="chart-calls">
      <BarChart data={data}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="day" tickFormatter={(d: string) => d.slice(5)} />
        <YAxis allowDecimals={false} />
        <Tooltip />
        <Legend />
        {keys.map((key, i) => (
          <Bar key={key} dataKey={key} fill={PALETTE[i % PALETTE.length]} isAnimationActive={false} />
        ))}
      </BarChart>
    </Frame>
  );
}

export function JobsByKindChart({ data }: { data: { kind: string; PENDING: number; SUCCESS: number; FAILED: number }[] }) {
  if (data.every((d) => d.PENDING + d.SUCCESS + d.FAILED === 0)) return <EmptyState title="No jobs yet" />;
  return (
    <Frame testId="chart-jobs">
      <BarChart data={data}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="kind" interval={0} tickFormatter={(k: string) => ({ FINGERPRINT_ADDITION: "Registration", VERIFICATION: "Verification", IDENTIFICATION: "Identification" })[k] ?? k} tick={{ fontSize: 11 }} />
        <YAxis allowDecimals={false} />
        <Tooltip />
        <Legend />
        <Bar dataKey="SUCCESS" fill={GENUINE} isAnimationActive={false} />
        <Bar dataKey="FAILED" fill={IMPOSTOR} isAnimationActive={false} />
        <Bar dataKey="PENDING" fill="#b45309" isAnimationActive={false} />
      </BarChart>
    </Frame>
  );
}

const SCORE_TICKS = [0, 20, 40, 60, 80, 100];

export function VerificationScoresChart({ data, threshold }: { data: { from: number; verified: number; notVerified: number }[]; threshold: number }) {
  if (data.every((d) => d.verified + d.notVerified === 0)) return <EmptyState title="No verifications yet" />;
  // A numeric score axis from 0 to 100 (the whole scale, its top ticked); each bar sits at its bin's middle.
  const width = data.length > 1 ? data[1].from - data[0].from : 5;
  const rows = data.map((d) => ({ ...d, score: d.from + width / 2 }));
  return (
    <Frame testId="chart-verification-scores">
      <BarChart data={rows}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="score" type="number" domain={[0, 100]} ticks={SCORE_TICKS} allowDataOverflow />
        <YAxis allowDecimals={false} />
        <Tooltip />
        <Legend />
        <Bar dataKey="verified" fill={GENUINE} isAnimationActive={false} />
        <Bar dataKey="notVerified" name="not verified" fill={IMPOSTOR} isAnimationActive={false} />
        <ReferenceLine x={threshold} stroke="#0f172a" strokeDasharray="4 2" label={{ value: `threshold ${threshold}`, position: "top" }} />
      </BarChart>
    </Frame>
  );
}

export function ScoreHistogramChart({ data, threshold }: { data: { from: number; genuine: number; impostor: number }[]; threshold: number }) {
  // Log axis: zero counts cannot be drawn, so they are left out rather than faked.
  // A numeric score axis from 0 to 100 (the whole scale, its top ticked); each bar sits at its bin's middle.
  const width = data.length > 1 ? data[1].from - data[0].from : 2;
  const rows = data.map((d) => ({ score: d.from + width / 2, genuine: d.genuine || null, impostor: d.impostor || null }));
  return (
    <Frame testId="chart-histogram">
      <BarChart data={rows} barCategoryGap={0} barGap={0}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="score" type="number" domain={[0, 100]} ticks={SCORE_TICKS} allowDataOverflow />
        <YAxis scale="log" domain={[1, "auto"]} allowDataOverflow />
        <Tooltip />
        <Legend />
        <Bar dataKey="impostor" fill={IMPOSTOR} fillOpacity={0.8} isAnimationActive={false} />
        <Bar dataKey="genuine" fill={GENUINE} fillOpacity={0.8} isAnimationActive={false} />
        <ReferenceLine x={threshold} stroke="#0f172a" strokeDasharray="4 2" label={{ value: `threshold ${threshold}`, position: "top" }} />
      </BarChart>
    </Frame>
  );
}

/** A rate as a percentage people read ("0.01 %", "10 %"), not 1e-4. */
const percent = (v: number) => `${+(v * 100).toPrecision(2)} %`;
const DECADES = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1];

export function DetChart({ data, threshold }: { data: { threshold: number; fmr: number; fnmr: number }[]; threshold: number }) {
  const at = data.reduce((best, p) => (Math.abs(p.threshold - threshold) < Math.abs(best.threshold - threshold) ? p : best), data[0]);
  const positive = (key: "fmr" | "fnmr") => data.map((p) => p[key]).filter((v) => v > 0);
  // Axes end at the decades around the data: no empty band past the last point.
  const span = (values: number[]): [number, number] => {
    if (values.length === 0) return [1e-4, 1];
    return [10 ** Math.floor(Math.log10(Math.min(...values))), Math.min(1, 10 ** Math.ceil(Math.log10(Math.max(...values))))];
  };
  const x = span(positive("fmr"));
  const y = span(positive("fnmr"));
  const ticks = ([lo, hi]: [number, number]) => DECADES.filter((d) => d >= lo && d <= hi);
  return (
    <Frame testId="chart-det">
      <LineChart data={data} margin={{ top: 24, right: 24, bottom: 20, left: 16 }}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="fmr" type="number" scale="log" domain={x} ticks={ticks(x)} allowDataOverflow name="FMR" tickFormatter={percent} label={{ value: "false match rate", position: "insideBottom", offset: -12 }} />
        <YAxis dataKey="fnmr" type="number" scale="log" domain={y} ticks={ticks(y)} allowDataOverflow tickFormatter={percent} width={64} label={{ value: "false non-match rate", angle: -90, position: "insideLeft", offset: -8, style: { textAnchor: "middle" } }} />
        <Tooltip formatter={(v) => percent(Number(v))} labelFormatter={(v) => `FMR ${percent(Number(v))}`} />
        <Line dataKey="fnmr" name="FNMR" stroke="#1d4ed8" dot={false} isAnimationActive={false} />
        {at && <ReferenceDot x={at.fmr} y={at.fnmr} r={5} fill="#0f172a" label={{ value: `threshold ${threshold}`, position: "top", offset: 10 }} />}
      </LineChart>
    </Frame>
  );
}
