/** The q-quantile (0..1) of samples, nearest rank. */
export function quantile(samples: number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * CPU time of this process (every thread: sharp's and other worker threads included) since `since`, in ms.
 * Unlike wall time it is not stretched by other processes sharing the machine, so runs at load compare.
 */
export function cpuMsSince(since: NodeJS.CpuUsage): number {
  return cpuMsBetween(since, process.cpuUsage());
}

/** CPU time of this process between two of its `process.cpuUsage()` readings, in ms. */
export function cpuMsBetween(from: NodeJS.CpuUsage, to: NodeJS.CpuUsage): number {
  return (to.user + to.system - from.user - from.system) / 1000;
}

export const ms = (value: number) => (value >= 100 ? `${Math.round(value)} ms` : `${value.toFixed(1)} ms`);
export const pct = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
export const num = (value: number) => Math.round(value).toLocaleString("en-US");
export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** A markdown table. */
export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** What a latency probe's reads show: how many, the answered ones' p50 / p99 / max, and how many failed (negative: no answer). */
export function readFigures(reads: number[]): { calls: number; p50: number; p99: number; max: number; failed: number } {
  const answered = reads.filter((latency) => latency >= 0);
  return { calls: reads.length, p50: quantile(answered, 0.5), p99: quantile(answered, 0.99), max: Math.max(0, ...answered), failed: reads.length - answered.length };
}
