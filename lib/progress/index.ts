/**
 * The command-line tools' one progress report, on stderr. On a terminal a cli-progress bar redrawn
 * in place (with a bar and an ETA when the total is known). Elsewhere (a log file, CI, a pipe) a
 * plain line every 10 s while work goes on, and nothing else: a bar drawn into a file is noise, and
 * cli-progress' own no-terminal mode prints its bar once at the start and once at the end.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  /** Starts a phase (e.g. the apply after the diff) with a fresh count. */
  phase(name: string, total: number | null): void;
  update(done: number): void;
  stop(): void;
}

export interface ProgressOptions {
  /** The tool's name, first on each line ("replay"). */
  label: string;
  /** What is counted ("polls", "shipments"). */
  unit: string;
  enabled: boolean;
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** The no-terminal line's period; 10 s. */
  everyMs?: number;
}

const SILENT: Progress = { phase() {}, update() {}, stop() {} };
export const PLAIN_LINE_EVERY_MS = 10_000;

const count = (n: number) => n.toLocaleString('en-US');

export function createProgress(options: ProgressOptions): Progress {
  if (!options.enabled) return SILENT;
  const stream = options.stream ?? process.stderr;
  return stream.isTTY ? barProgress(options, stream as NodeJS.WriteStream) : lineProgress(options, stream, options.everyMs ?? PLAIN_LINE_EVERY_MS);
}

function barProgress({ label, unit }: ProgressOptions, stream: NodeJS.WriteStream): Progress {
  let bar: cliProgress.SingleBar | null = null;
  let startedAt = 0;
  let total: number | null = null;
  const speed = (done: number) => {
    const seconds = (performance.now() - startedAt) / 1000;
    return seconds > 0 ? count(Math.round(done / seconds)) : '0';
  };
  return {
    phase(name, phaseTotal) {
      bar?.stop();
      total = phaseTotal;
      startedAt = performance.now();
      const format = total === null
        ? `${label} ${name} | {value} ${unit} | {speed} ${unit}/s | {duration_formatted}`
        : `${label} ${name} |{bar}| {percentage}% | {value}/{total} ${unit} | {speed} ${unit}/s | ETA {eta_formatted}`;
      bar = new cliProgress.SingleBar({ format, stream, etaBuffer: 50, fps: 5, hideCursor: false }, cliProgress.Presets.shades_classic);
      bar.start(total ?? 0, 0, { speed: '0' });
    },
    update(done) {
      if (!bar) return;
      // A total that was an estimate (e.g. rows counting rewrites) never lets done pass it.
      if (total !== null && done > total) bar.setTotal(done);
      bar.update(done, { speed: speed(done) });
    },
    stop() {
      bar?.stop();
      bar = null;
    },
  };
}

function lineProgress({ label, unit }: ProgressOptions, stream: NodeJS.WritableStream, everyMs: number): Progress {
  let timer: NodeJS.Timeout | null = null;
  let name = '';
  let total: number | null = null;
  let done = 0;
  let startedAt = 0;
  const line = () => {
    const seconds = (Date.now() - startedAt) / 1000;
    const of = total === null ? '' : ` of ${count(Math.max(total, done))} (${((done / Math.max(total, done, 1)) * 100).toFixed(1)} %)`;
    stream.write(`${label} ${name}: ${count(done)} ${unit}${of}, ${count(Math.round(done / Math.max(seconds, 0.001)))} ${unit}/s, ${Math.round(seconds)} s\n`);
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
  };
  return {
    phase(phaseName, phaseTotal) {
      stop();
      name = phaseName;
      total = phaseTotal;
      done = 0;
      startedAt = Date.now();
      timer = setInterval(line, everyMs);
      // A report must never keep the process alive on its own.
      timer.unref();
    },
    update(n) {
      done = n;
    },
    stop,
  };
}
