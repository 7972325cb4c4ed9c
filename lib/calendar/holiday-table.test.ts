import Holidays from 'date-holidays';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deriveHolidayTable, libraryHolidays, publicHolidays, TABLE_YEARS } from './holiday-table.ts';
import { loadCalendar } from './load.ts';
import { STATE_CODES } from './states.ts';

/** The library as its users import it (its ES module build), not through the table or its CommonJS build. */
function fromLibrary(code: string, year: number): [string, string][] {
  const source = code === '' ? new Holidays('IN') : new Holidays('IN', code);
  return source.getHolidays(year).filter((h) => h.type === 'public').map((h) => [h.date.slice(0, 10), h.name]);
}

describe('the holiday table', () => {
  it('holds what date-holidays gives for the nation and every state, in every year it covers', () => {
    let days = 0;
    for (const code of ['', ...STATE_CODES]) {
      for (let year = TABLE_YEARS.first; year <= TABLE_YEARS.last; year++) {
        const listed = publicHolidays(code, year);
        expect(listed, `${code || 'national'} ${year}`).toEqual(fromLibrary(code, year));
        days += listed.length;
      }
    }
    // Not an empty table agreeing with an empty library: India has public holidays every year.
    expect(days).toBeGreaterThan(500);
    expect(publicHolidays('', 2026)).toContainEqual(['2026-01-26', 'Republic Day']);
  });

  it('asks the library itself outside the years it covers', () => {
    const year = TABLE_YEARS.last + 3;
    expect(publicHolidays('MH', year)).toEqual(fromLibrary('MH', year));
    expect(libraryHolidays('', year)).toContainEqual([`${year}-08-15`, 'Independence Day']);
    // The calendar reads it so: Independence Day rests far past the table too.
    expect(loadCalendar().isWorkingDay(`${year}-08-15`, { carrier: 'delhivery', state: 'MH' })).toBe(false);
  });

  it('is the file the derive script writes (scripts/calendar/derive-holidays.ts --check)', () => {
    expect(deriveHolidayTable().firstYear).toBe(TABLE_YEARS.first);
    const script = fileURLToPath(new URL('../../scripts/calendar/derive-holidays.ts', import.meta.url));
    expect(execFileSync(process.execPath, [script, '--check'], { encoding: 'utf8' })).toContain('is up to date');
  });
});
