/**
 * Progress of a long replay on stderr (cli-progress): polls done, polls/s and, when the total is
 * known (ClickHouse counts the window first), a bar and an ETA. On a terminal it redraws in place;
 * elsewhere (a log file, CI) it prints a line every 10 s.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number): void;
  /** Starts the next phase (the apply after the diff) with a fresh count. */
  phase(name: string, total: number | null): void;
  stop(): void;
}

const SILENT: Progress = { update() {}, phase() {}, stop() {} };

/** `label` starts each line (default `replay`). */
export function createProgress(options: { enabled: boolean; stream?: NodeJS.WriteStream; label?: string }): Progress {
  const label = options.label ?? 'replay';
  if (!options.enabled) return SILENT;
  const stream = options.stream ?? process.stderr;
  let bar: cliProgress.SingleBar | null = null;
  let startedAt = 0;
  let total: number | null = null;
  const speed = (done: number) => {
    const seconds = (performance.now() - startedAt) / 1000;
    return seconds > 0 ? Math.round(done / seconds).toLocaleString('en-US') : '0';
  };
  return {
    phase(name, phaseTotal) {
      bar?.stop();
      total = phaseTotal;
      startedAt = performance.now();
      const format = total === null
        ? `${label} ${name} | {value} polls | {speed} polls/s | {duration_formatted}`
        : `${label} ${name} |{bar}| {percentage}% | {value}/{total} polls | {speed} polls/s | ETA {eta_formatted}`;
      bar = new cliProgress.SingleBar({ format, stream, noTTYOutput: true, notTTYSchedule: 10_000, etaBuffer: 50, fps: 5, hideCursor: false }, cliProgress.Presets.shades_classic);
      bar.start(total ?? 0, 0, { speed: '0' });
    },
    update(done) {
      if (!bar) return;
      // The window's count includes not-yet-merged rewrites of a poll: never let done pass it.
      if (total !== null && done > total) bar.setTotal(done);
      bar.update(done, { speed: speed(done) });
    },
    stop() {
      bar?.stop();
      bar = null;
    },
  };
}
