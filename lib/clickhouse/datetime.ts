/**
 * DateTime('UTC') values as JSONEachRow carries them: 'YYYY-MM-DD hh:mm:ss' (every release reads
 * this form; numbers are read as epoch seconds only by some). Whole seconds: 18.16 has no DateTime64.
 */
import { toUtcDateTimeText } from '../normalize/time.ts';

/** DateTime is an unsigned 32-bit count of seconds: 1970-01-01 to 2106-02-07. */
const MAX_SECONDS = 0xffffffff;

export class DateTimeRangeError extends RangeError {
  constructor(ms: number) {
    super(`instant outside ClickHouse DateTime range (1970-2106): ${Number.isFinite(ms) ? new Date(ms).toISOString() : ms}`);
    this.name = 'DateTimeRangeError';
  }
}

export function inDateTimeRange(ms: number): boolean {
  return Number.isFinite(ms) && ms >= 0 && Math.floor(ms / 1000) <= MAX_SECONDS;
}

/** Epoch ms → 'YYYY-MM-DD hh:mm:ss' (UTC, milliseconds dropped); throws outside the DateTime range. */
export function toClickHouseDateTime(ms: number): string {
  if (!inDateTimeRange(ms)) throw new DateTimeRangeError(ms);
  // Formatted by arithmetic, not via toISOString (~0.5 µs, several per poll in the pipeline);
  // every instant of the DateTime range is within what toUtcDateTimeText formats.
  return toUtcDateTimeText(Math.floor(ms))!;
}

/** Like toClickHouseDateTime, but null for null, NaN or an out-of-range instant (optional columns). */
export function toClickHouseDateTimeOrNull(ms: number | null): string | null {
  return ms === null || !inDateTimeRange(ms) ? null : toClickHouseDateTime(ms);
}

/** 'YYYY-MM-DD hh:mm:ss' of a DateTime('UTC') column → epoch ms (plus `extraMs` kept elsewhere). */
export function fromClickHouseDateTime(text: string, extraMs = 0): number {
  const ms = Date.parse(`${text.replace(' ', 'T')}Z`);
  if (Number.isNaN(ms)) throw new TypeError(`not a ClickHouse DateTime: ${JSON.stringify(text)}`);
  return ms + extraMs;
}

/** 'YYYY-MM-DD hh:mm:ss' → '2026-11-20T03:45:00.000Z', the API's timestamp form. */
export function clickHouseDateTimeToIso(text: string, extraMs = 0): string {
  return new Date(fromClickHouseDateTime(text, extraMs)).toISOString();
}
