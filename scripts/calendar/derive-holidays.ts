/**
 * Derives lib/calendar/holidays-in.json, the public holidays of India and its states that the
 * delivery calendar reads, from the `date-holidays` package (lib/calendar/holiday-table.ts says why
 * a table and not the library at every start).
 *
 *   node scripts/calendar/derive-holidays.ts [--check]
 *
 * `--check` exits 1 when the committed table differs from what the package gives (after an upgrade).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deriveHolidayTable } from '../../lib/calendar/holiday-table.ts';

const OUT = fileURLToPath(new URL('../../lib/calendar/holidays-in.json', import.meta.url));
// A line per code and year: a readable diff when a holiday moves.
const table = deriveHolidayTable();
const codes = Object.entries(table.holidays).map(([code, years]) => {
  const lines = Object.entries(years).map(([year, days]) => `      ${JSON.stringify(year)}: ${JSON.stringify(days)}`);
  return `    ${JSON.stringify(code)}: {\n${lines.join(',\n')}\n    }`;
});
const text = `{\n  "source": ${JSON.stringify(table.source)},\n  "firstYear": ${table.firstYear},\n  "lastYear": ${table.lastYear},\n` +
  `  "holidays": {\n${codes.join(',\n')}\n  }\n}\n`;

if (process.argv.includes('--check')) {
  if (readFileSync(OUT, 'utf8') !== text) {
    console.error(`${OUT} is not what date-holidays gives: run node scripts/calendar/derive-holidays.ts`);
    process.exit(1);
  }
  console.log(`${OUT} is up to date`);
} else {
  writeFileSync(OUT, text);
  console.log(`wrote ${OUT} (${table.source}, ${table.firstYear}–${table.lastYear})`);
}
