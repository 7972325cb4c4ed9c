/** The retry ladder of deliveries (contracts.md "Push"). Pure. */

/** Seconds after each failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
/** A receiver's Retry-After is honoured up to this; longer asks are cut to it. */
export const MAX_RETRY_AFTER_SECONDS = 3600;
/** Each scheduled wait moves by up to ±20 %, so endpoints that failed together do not retry together. */
export const JITTER = 0.2;

/** WEBHOOK_RETRY_SCHEDULE: comma-separated positive seconds. Throws with a message on anything else. */
export function parseRetrySchedule(text: string, name = 'WEBHOOK_RETRY_SCHEDULE'): number[] {
  const parts = text.split(',').map((p) => p.trim());
  const seconds = parts.map(Number);
  if (parts.length === 0 || seconds.some((s, i) => !/^\d+(\.\d+)?$/.test(parts[i]!) || !(s > 0))) {
    throw new Error(`${name} must be comma-separated positive seconds, e.g. 5,300,1800 (got "${text}")`);
  }
  return seconds;
}

/**
 * Milliseconds to wait after the `failedAttempts`-th failed attempt of an event, or null when the
 * ladder is used up (the event is then marked failed). `retryAfterSeconds` from the receiver
 * replaces the scheduled wait (no jitter: the receiver asked for that moment).
 */
export function retryDelayMs(
  failedAttempts: number, schedule: readonly number[], retryAfterSeconds: number | null = null, random: () => number = Math.random,
): number | null {
  const step = schedule[failedAttempts - 1];
  if (step === undefined) return null;
  if (retryAfterSeconds !== null && retryAfterSeconds >= 0) return Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS) * 1000;
  const factor = 1 - JITTER + 2 * JITTER * random();
  return Math.round(step * 1000 * factor);
}
