/** A log of plain lines by level: what noisy clients (kafkajs, ioredis) report through. */
export type LineLog = (level: 'error' | 'warn' | 'info', message: string) => void;

/** A line repeated within this window is held back and counted, then reported with the count. */
const REPEAT_WINDOW_MS = 10_000;

/**
 * While a service is down its client repeats the same few lines several times a second (every retry
 * of every connection): each distinct line passes at most once per window, with how many were held
 * back.
 */
export function withoutRepeats(log: LineLog, clock: () => number = Date.now): LineLog {
  const seen = new Map<string, { at: number; held: number }>();
  return (level, message) => {
    const key = `${level} ${message}`;
    const now = clock();
    const last = seen.get(key);
    if (last && now - last.at < REPEAT_WINDOW_MS) {
      last.held += 1;
      return;
    }
    log(level, last?.held ? `${message} (and ${last.held} more like it in ${Math.round((now - last.at) / 1000)} s)` : message);
    seen.set(key, { at: now, held: 0 });
    // Lines carry no ids or times, so the distinct ones are few; forget them all if that ever changes.
    if (seen.size > 1_000) seen.clear();
  };
}
