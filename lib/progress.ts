import cliProgress from "cli-progress";

/**
 * A progress bar with an ETA for long commands (synth, eval, calibrate, ...), on stderr and only
 * when stderr is a terminal; otherwise `fallback` sees each step (to log a line now and then), so
 * logs and pipes keep plain lines.
 */
export interface Progress {
  tick(steps?: number): void;
  stop(): void;
}

export function startProgress(label: string, total: number, fallback?: (done: number, total: number) => void): Progress {
  if (!process.stderr.isTTY || total <= 0) {
    let done = 0;
    return {
      tick(steps = 1) {
        done += steps;
        fallback?.(done, total);
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {percentage}% {value}/{total} | ETA {eta_formatted}`, stream: process.stderr, etaBuffer: 100, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    tick(steps = 1) {
      bar.increment(steps);
    },
    stop() {
      bar.stop();
    },
  };
}
