import { ConfigError } from '../config/index.ts';

/** What an app's start returns: its stop runs the app's fixed shutdown order. */
export interface StoppableApp {
  stop(): Promise<void>;
  /** The step of the stop under way (StopSteps), named when the stop outlives its deadline. */
  stopStep?(): string | null;
}

/**
 * An app's stop as named steps run in order, remembering the one under way: when a stop hangs,
 * the runner's message says where (e.g. "the tick in progress") rather than only which app.
 */
export class StopSteps {
  private current: string | null = null;

  async step<T>(name: string, run: () => Promise<T> | T): Promise<T> {
    this.current = name;
    const result = await run();
    this.current = null;
    return result;
  }

  /** The step started and not yet finished (null between steps and after the last). */
  underWay(): string | null {
    return this.current;
  }
}

export interface RunOptions {
  /** Past this after SIGTERM/SIGINT the process exits 1, saying the stop hung (default 30 s). */
  deadlineMs?: number;
  /** Runs last, after stop or a failed start (e.g. flushing logs). */
  finally?: () => Promise<void>;
}

/**
 * The one process runner of every app: starts it; on SIGTERM or SIGINT stops it (the app's own
 * fixed order) and exits 0, or exits 1 naming the app if the stop fails or outlives the deadline
 * (and the step it hung at, for apps that report it);
 * a start that fails exits 1 with the reason (a configuration error without a stack trace).
 *
 * The signal handlers are in place before the start begins: a signal during the start (an app may
 * print "ready" before its start has returned) stops the app once it has started, instead of the
 * default action killing it with nothing closed.
 */
export function runApp(name: string, start: () => Promise<StoppableApp>, options: RunOptions = {}): void {
  const deadlineMs = options.deadlineMs ?? 30_000;
  const last = options.finally ?? (async () => {});
  let stopping = false;
  const stop = async (signal: string, app: Promise<StoppableApp>) => {
    if (stopping) return;
    stopping = true;
    let started: StoppableApp | null = null;
    // Not unref'd: a stop awaiting something that never settles, with nothing else alive, would
    // otherwise let the process end as if it had stopped cleanly (exit 0).
    setTimeout(() => {
      const step = started ? started.stopStep?.() : 'the start';
      console.error(`${name}: ${signal}: the stop did not finish within ${deadlineMs} ms${step ? ` (hung at: ${step})` : ''}; exiting anyway`);
      process.exit(1);
    }, deadlineMs);
    try {
      started = await app;
    } catch {
      return; // the start failed: its handler below reports it and exits 1
    }
    try {
      await started.stop();
      await last();
      process.exit(0);
    } catch (err) {
      console.error(`${name}: ${signal}: the stop failed:`, err);
      await last();
      process.exit(1);
    }
  };
  const app = Promise.resolve().then(start);
  process.once('SIGTERM', () => void stop('SIGTERM', app));
  process.once('SIGINT', () => void stop('SIGINT', app));
  app.catch(async (err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err);
    await last();
    process.exit(1);
  });
}
