/**
 * When a notice may go (contracts.md "Customer notices", issue 43 "Behaving well"). Pure.
 * - Quiet hours (default 21:00–09:00 IST, per key): a notice due inside them waits for their end,
 *   except out for delivery, which is only useful the same morning.
 * - At most 4 notices per shipment per IST day; one more that day is not sent (status `suppressed`):
 *   a fifth message the same day is noise, and waiting would tell old news.
 */
import { DAY_MS, IST_OFFSET_MS, MINUTE_MS } from '../time/index.ts';
import { NOTICE_KINDS, type NoticeKind } from './kinds.ts';

export const DAILY_CAP = 4;

export interface QuietHours {
  /** IST wall clock `HH:MM`; `start` after `end` spans midnight. */
  start: string;
  end: string;
}

export interface NoticeSettings {
  /** Which notices the key's customers get. */
  events: NoticeKind[];
  /** Null: none (every notice goes at once). */
  quiet_hours: QuietHours | null;
}

export const DEFAULT_NOTICE_SETTINGS: NoticeSettings = { events: [...NOTICE_KINDS], quiet_hours: { start: '21:00', end: '09:00' } };

const minutesOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));

/** The IST minute of the day at `ms`. */
function istMinute(ms: number): number {
  return Math.floor((((ms + IST_OFFSET_MS) % DAY_MS) + DAY_MS) % DAY_MS / MINUTE_MS);
}

/** When a notice of `kind` due at `nowMs` may go: `nowMs`, or the end of the quiet hours it falls in. */
export function sendableAt(kind: NoticeKind, nowMs: number, quiet: QuietHours | null): number {
  if (!quiet || kind === 'out_for_delivery') return nowMs;
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  if (start === end) return nowMs;
  const m = istMinute(nowMs);
  const inside = start < end ? m >= start && m < end : m >= start || m < end;
  if (!inside) return nowMs;
  const wait = (end - m + 24 * 60) % (24 * 60);
  // To the whole minute of the end.
  return nowMs - (nowMs % MINUTE_MS) + wait * MINUTE_MS;
}

/** The IST day (days since the epoch) of an instant: the daily cap's day. */
export const istDayNumber = (ms: number) => Math.floor((ms + IST_OFFSET_MS) / DAY_MS);

/** A shipment's notices of one IST day (the daily cap's slots). */
export interface DaySlots { day: number; ids: string[] }

/**
 * Notice `id` takes one of the shipment's slots of the day at `nowMs`: the slots after it, or null
 * when the day is full. A notice that holds one already keeps it (a retry); a new day starts empty.
 */
export function takeDaySlot(slots: DaySlots | null, id: string, nowMs: number): DaySlots | null {
  const today = istDayNumber(nowMs);
  const held = slots?.day === today ? slots.ids : [];
  if (held.includes(id)) return { day: today, ids: held };
  return held.length < DAILY_CAP ? { day: today, ids: [...held, id] } : null;
}

export const isClock = (value: string) => /^([01]\d|2[0-3]):[0-5]\d$/.test(value);

