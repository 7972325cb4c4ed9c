import { IST_OFFSET_MS } from '../time/index.ts';
/** India Standard Time wall-clock parts of an instant, for writing carrier-style local times. */
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export interface IstParts {
  year: string;    // 2026
  month: string;   // 01-12
  day: string;     // 01-31
  hour: string;    // 00-23
  minute: string;  // 00-59
  second: string;  // 00-59
  monthName: string;  // November
  monthShort: string; // Nov
}

const pad = (n: number) => String(n).padStart(2, '0');

export function istParts(ms: number): IstParts {
  const d = new Date(ms + IST_OFFSET_MS);
  const monthName = MONTHS[d.getUTCMonth()]!;
  return {
    year: String(d.getUTCFullYear()),
    month: pad(d.getUTCMonth() + 1),
    day: pad(d.getUTCDate()),
    hour: pad(d.getUTCHours()),
    minute: pad(d.getUTCMinutes()),
    second: pad(d.getUTCSeconds()),
    monthName,
    monthShort: monthName.slice(0, 3),
  };
}

/** `2026-11-20T09:15:00` — IST wall time without an offset, as most carriers write it. */
export function istIsoLocal(ms: number): string {
  const p = istParts(ms);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

/** Parses IST wall-clock fields back to epoch ms (month 1-12). */
export function istToMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  return Date.UTC(year, month - 1, day, hour, minute, second) - IST_OFFSET_MS;
}
