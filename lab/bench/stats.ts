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
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
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
