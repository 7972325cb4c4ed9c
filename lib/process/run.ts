import { ConfigError } from '../config/index.ts';

/** What an app's start returns: its stop runs the app's fixed shutdown order. */
export interface StoppableApp {
  stop(): Promise<void>;
}

export interface RunOptions {
  /** Past this after SIGTERM/SIGINT the process exits 1, saying the stop hung (default 30 s). */
  deadlineMs?: number;
  /** Runs last, after stop or a failed start (e.g. flushing logs). */
  finally?: () => Promise<void>;
}

/**
 * The one process runner of every app: starts it; on SIGTERM or SIGINT stops it (the app's own
 * fixed order) and exits 0, or exits 1 naming the app if the stop fails or outlives the deadline;
 * a start that fails exits 1 with the reason (a configuration error without a stack trace).
 */
export function runApp(name: string, start: () => Promise<StoppableApp>, options: RunOptions = {}): void {
  const deadlineMs = options.deadlineMs ?? 30_000;
  const last = options.finally ?? (async () => {});
  start().then((app) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      const timer = setTimeout(() => {
        console.error(`${name}: ${signal}: the stop did not finish within ${deadlineMs} ms; exiting anyway`);
        process.exit(1);
      }, deadlineMs);
      timer.unref();
      try {
        await app.stop();
        await last();
        process.exit(0);
      } catch (err) {
        console.error(`${name}: ${signal}: the stop failed:`, err);
        await last();
        process.exit(1);
      }
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
  }, async (err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err);
    await last();
    process.exit(1);
  });
}
