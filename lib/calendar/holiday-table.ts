/**
 * Public holidays of India and of each state, as `date-holidays` gives them (country IN, type
 * `public`), read from a table derived from it (holidays-in.json) for the years lookups and the
 * seeded history ask, so a start does not load the library: it carries every country's rules and
 * their calendars (astronomia, moment-timezone), ~13 MiB of resident memory for the one country
 * used. A year outside the table asks the library itself, loaded then.
 *
 * `scripts/calendar/derive-holidays.ts` writes the table; `holiday-table.test.ts` checks it against
 * the library, so an upgrade that moves a holiday fails there until the table is derived again.
 */
import { readFileSync } from 'node:fs';
import type { IstDay } from '../time/ist-day.ts';
import { lazyModule } from '../lazy/lazy-module.ts';
import { STATE_CODES } from './states.ts';

/** A holiday: its IST day and its name. */
export type Holiday = readonly [IstDay, string];

/** The table's file: per code ('' national, else a state code), per year, its public holidays. */
export interface HolidayTable {
  source: string;
  firstYear: number;
  lastYear: number;
  holidays: Record<string, Record<string, Holiday[]>>;
}

/** The years the table covers: the seeded history's past and the predictions' future around today. */
export const TABLE_YEARS = { first: 2024, last: 2032 } as const;

const TABLE_PATH = new URL('./holidays-in.json', import.meta.url);

/** date-holidays through its CommonJS build (`module.exports = Holidays`), loaded at its first use. */
const holidaysLibrary = lazyModule<typeof import('date-holidays').default>('date-holidays');
const libraryPackage = lazyModule<{ version: string }>('date-holidays/package.json');

/** The public holidays of `code` ('' national) in `year`, asked of the library itself. */
export function libraryHolidays(code: string, year: number): Holiday[] {
  const Holidays = holidaysLibrary();
  const source = code === '' ? new Holidays('IN') : new Holidays('IN', code);
  // Only public holidays close hubs; observances and optional days do not.
  return source.getHolidays(year).filter((h) => h.type === 'public').map((h) => [h.date.slice(0, 10), h.name] as const);
}

/** The table for TABLE_YEARS, every state and the nation, from the library (what the derive script writes). */
export function deriveHolidayTable(): HolidayTable {
  const { version } = libraryPackage();
  const holidays: HolidayTable['holidays'] = {};
  for (const code of ['', ...STATE_CODES]) {
    const byYear: Record<string, Holiday[]> = {};
    for (let year = TABLE_YEARS.first; year <= TABLE_YEARS.last; year++) byYear[year] = libraryHolidays(code, year);
    holidays[code] = byYear;
  }
  return { source: `date-holidays ${version}, country IN, type public`, firstYear: TABLE_YEARS.first, lastYear: TABLE_YEARS.last, holidays };
}

let table: HolidayTable | null = null;

/** The public holidays of `code` ('' national) in `year`: from the table where it covers the year. */
export function publicHolidays(code: string, year: number): readonly Holiday[] {
  table ??= JSON.parse(readFileSync(TABLE_PATH, 'utf8')) as HolidayTable;
  const listed = year >= table.firstYear && year <= table.lastYear ? table.holidays[code]?.[year] : undefined;
  return listed ?? libraryHolidays(code, year);
}
