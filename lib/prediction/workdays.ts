/**
 * Working-day arithmetic on day numbers, for the model's hot paths: the calendar answers one day at
 * a time (strings, memoised per state), while the model counts working days between millions of
 * pairs of days when it learns and maps a few per lookup. This index keeps, per carrier Sunday rule
 * and state, the running count of working days, so a count is one subtraction.
 */
import type { DeliveryCalendar } from '../calendar/index.ts';
import { stateCodeOf } from '../calendar/index.ts';
import { DAY_MS, IST_OFFSET_MS } from '../time/index.ts';
import type { IstDay } from '../time/ist-day.ts';

/** Day numbers count IST days since 1970-01-01. */
export function dayNumberOf(ms: number): number {
  return Math.floor((ms + IST_OFFSET_MS) / DAY_MS);
}

const dayTexts = new Map<number, IstDay>();
export function dayText(dayNumber: number): IstDay {
  let text = dayTexts.get(dayNumber);
  if (text === undefined) {
    text = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
    dayTexts.set(dayNumber, text);
  }
  return text;
}

export function dayNumberOfText(day: IstDay): number {
  return Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
}

/** The running counts cover this many days from their start; a later day extends them. */
const SPAN = 4 * 366;

interface Counts {
  start: number;
  /** cum[i]: working days in [start, start + i]. */
  cum: Int32Array;
  working: Uint8Array;
}

/** Working days per carrier (its Sunday rule) and state (its holidays): counts kept per context. */
export class WorkdayIndex {
  private readonly contexts = new Map<string, Counts>();

  private readonly calendar: DeliveryCalendar;
  constructor(calendar: DeliveryCalendar) {
    this.calendar = calendar;
  }

  /** The context key of a carrier and a state (name or code): what decides its working days. */
  contextOf(carrier: string, state: string | null): string {
    return `${carrier}|${stateCodeOf(state) ?? ''}`;
  }

  private counts(context: string, day: number): Counts {
    let counts = this.contexts.get(context);
    if (!counts || day < counts.start || day >= counts.start + counts.cum.length) {
      // Start a little before the first day asked so earlier as-of days of the same data fit.
      const start = counts ? Math.min(counts.start, day - 60) : day - 400;
      const end = counts ? Math.max(counts.start + counts.cum.length, day + 60) : day + SPAN;
      counts = this.build(context, start, end - start);
      this.contexts.set(context, counts);
    }
    return counts;
  }

  private build(context: string, start: number, length: number): Counts {
    const bar = context.indexOf('|');
    const carrier = context.slice(0, bar);
    const state = context.slice(bar + 1) || null;
    const cum = new Int32Array(length);
    const working = new Uint8Array(length);
    let running = 0;
    for (let i = 0; i < length; i++) {
      const day = dayText(start + i);
      const ok = this.calendar.isWorkingDay(day, { carrier, state }) ? 1 : 0;
      working[i] = ok;
      running += ok;
      cum[i] = running;
    }
    return { start, cum, working };
  }

  isWorking(context: string, day: number): boolean {
    const c = this.counts(context, day);
    return c.working[day - c.start] === 1;
  }

  /** Working days in (from, to]; 0 when `to` ≤ `from`. */
  between(context: string, from: number, to: number): number {
    if (to <= from) return 0;
    const c = this.counts(context, Math.max(from, to));
    if (from < c.start) return this.between(context, from, to);
    return c.cum[to - c.start]! - c.cum[from - c.start]!;
  }

  /** The latest working day of the context on or before `day` (a month back at most, and not before the counts: past that, the last day looked at). */
  latestWorking(context: string, day: number): number {
    const c = this.counts(context, day);
    const last = day - c.start;
    let i = last;
    while (i > 0 && i > last - 31 && c.working[i] !== 1) i--;
    return c.start + i;
  }

  /**
   * The day `k` working days after `from` (k = 0: `from` itself when it is a working day, else the
   * next one): never a rest day of the context.
   */
  add(context: string, from: number, k: number): number {
    let c = this.counts(context, from);
    const base = c.cum[from - c.start]!;
    const target = base + Math.max(k, c.working[from - c.start] === 1 ? 0 : 1);
    let day = from;
    for (;;) {
      if (day - c.start >= c.cum.length) c = this.counts(context, day);
      const i = day - c.start;
      if (c.cum[i]! >= target && c.working[i] === 1) return day;
      day++;
    }
  }
}

