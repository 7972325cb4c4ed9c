import { memoize } from './memo.ts';
import { DAY_MS, IST_OFFSET, IST_OFFSET_MS } from '../time/index.ts';

/** Carrier times without an offset are India Standard Time (decisions.md "Time"). */
const HAS_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/;

/** Epoch milliseconds of an ISO 8601 date-time; offset-less values are read as IST. NaN when invalid. */
export function parseCarrierTime(iso: string): number {
  const fast = istSecondsMs(iso);
  if (fast !== null) return fast;
  const withOffset = HAS_OFFSET.test(iso) ? iso : iso + IST_OFFSET;
  return Date.parse(withOffset);
}

/** The number written in iso[start, end), or -1 if any of those characters is not a digit. */
function digitsAt(iso: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = iso.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * The form carriers send most, 'YYYY-MM-DDThh:mm:ss' without offset (IST), read by arithmetic:
 * the regex, concatenation and Date.parse above cost ~0.2 µs, ten times per poll. null for any
 * other form, and for fields Date.parse might read otherwise (it rolls 30 February over to March,
 * years below 1000 …), which take the general road.
 */
function istSecondsMs(iso: string): number | null {
  if (iso.length !== 19 || iso[4] !== '-' || iso[7] !== '-' || iso[10] !== 'T' || iso[13] !== ':' || iso[16] !== ':') return null;
  const year = digitsAt(iso, 0, 4);
  const month = digitsAt(iso, 5, 7);
  const day = digitsAt(iso, 8, 10);
  const hour = digitsAt(iso, 11, 13);
  const minute = digitsAt(iso, 14, 16);
  const second = digitsAt(iso, 17, 19);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 28
    || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  return Date.UTC(year, month - 1, day, hour, minute, second) - IST_OFFSET_MS;
}


/** 10000-01-01T00:00:00Z: from here on toISOString writes a six-digit signed year. */
const YEAR_10000_MS = 253_402_300_800_000;

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** 'YYYY-MM-DD' of a UTC day number; a feed's times fall on few days, so each is formatted once. */
const dayText = memoize((day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10));

/** Whether toISOString of `ms` has the 'YYYY-…' form the fast formatters below write (1970-9999). */
function formattable(ms: number): boolean {
  return Number.isInteger(ms) && ms >= 0 && ms < YEAR_10000_MS;
}

/** 'YYYY-MM-DD?hh:mm:ss' of a formattable `ms`, with `separator` between date and time. */
function dateTimeText(ms: number, separator: string): string {
  const day = Math.floor(ms / DAY_MS);
  const seconds = Math.floor((ms - day * DAY_MS) / 1000);
  const ss = seconds % 60;
  const minutes = (seconds - ss) / 60;
  const mm = minutes % 60;
  const hh = (minutes - mm) / 60;
  return `${dayText(day)}${separator}${pad2(hh)}:${pad2(mm)}:${pad2(ss)}`;
}

/**
 * UTC ISO 8601 with milliseconds, the only timestamp form the API returns: exactly toISOString.
 * toISOString costs ~0.5 µs, a fifth of a scan's normalization; here the day is formatted once
 * per day and only the time of day by arithmetic (outside 1970-9999, toISOString itself).
 */
export function toUtcIso(ms: number): string {
  if (!formattable(ms)) return new Date(ms).toISOString();
  return `${dateTimeText(ms, 'T')}.${pad3(ms % 1000)}Z`;
}

export function toUtcIsoOrNull(ms: number | null): string | null {
  return ms === null || Number.isNaN(ms) ? null : toUtcIso(ms);
}

/** 'YYYY-MM-DD hh:mm:ss' in UTC, milliseconds dropped (ClickHouse DateTime text); null outside 1970-9999. */
export function toUtcDateTimeText(ms: number): string | null {
  return formattable(ms) ? dateTimeText(ms, ' ') : null;
}

/** Rounds to one decimal, as the spec's examples show (transit days, hours since last scan). */
export function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
