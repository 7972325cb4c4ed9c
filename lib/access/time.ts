import { DAY_MS, SECOND_MS } from '../time/index.ts';
/** Time arithmetic of the limits, all in UTC. Pure: "now" always comes from the caller. */


/** UTC ISO 8601 with milliseconds, the only timestamp format the service writes. */
export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The day `utcDay` last formatted: every lookup asks, and the answer changes once a day. */
let lastDay = { start: Number.NaN, text: '' };

/** The UTC calendar day, `YYYY-MM-DD`: the daily quota's window. */
export function utcDay(now: Date): string {
  const start = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  if (start !== lastDay.start) lastDay = { start, text: new Date(start).toISOString().slice(0, 10) };
  return lastDay.text;
}

/** The Unix second: the burst window. */
export function epochSecond(now: Date): number {
  return Math.floor(now.getTime() / SECOND_MS);
}

export function msToNextUtcMidnight(now: Date): number {
  const ms = now.getTime();
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS - ms;
}

/** Retry-After of `daily_quota_exceeded`: whole seconds, rounded up so a client never retries early. */
export function secondsToNextUtcMidnight(now: Date): number {
  return Math.ceil(msToNextUtcMidnight(now) / SECOND_MS);
}
