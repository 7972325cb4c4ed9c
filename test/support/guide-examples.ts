/**
 * The analysts' guide's example answers (docs/analysts.md) and its tables page's row counts
 * (docs/analysts/tables.md): read from the Markdown, and rewritten from a run's answers when the
 * examples are regenerated (ANALYSTS_EXAMPLES_WRITE=1, test/analysts-examples.services.test.ts).
 * One formatting for both ways, so a check compares exactly what the page shows.
 */
import { shownValue } from '../../apps/cli/commands/format.ts';

/** The history the examples come from, as the guide's command states it. */
export interface GuideHistory { shipments: number; days: number; seed: number; end: string }

const HISTORY_COMMAND = /npm run cli -- sandbox history --shipments (\d+) --days (\d+) --seed (\d+) --end (\S+) --into-stores/;

export function guideHistory(markdown: string): GuideHistory {
  const m = HISTORY_COMMAND.exec(markdown);
  if (!m) throw new Error('docs/analysts.md: no `npm run cli -- sandbox history --shipments N --days D --seed S --end ISO --into-stores` line for the examples');
  return { shipments: Number(m[1]), days: Number(m[2]), seed: Number(m[3]), end: m[4]! };
}

/** How a value is shown: as `cli sql` shows it (integers as they are, other numbers to 4 decimals, NULL, arrays as JSON), `|` escaped. */
export function shownCell(value: unknown): string {
  return shownValue(value).replace(/\|/g, '\\|');
}

/** Rows shown per example at most: longer answers show their first rows and say how many there are. */
export const SHOWN_ROWS = 12;

export interface GuideExample {
  id: string;
  /** Rows the answer has. */
  total: number;
  columns: string[];
  /** The first min(total, SHOWN_ROWS) rows, as shown. */
  rows: string[][];
}

/** The block after each `sql qN` fence: a headline, then a table unless the answer is empty. */
const EXAMPLE = /(```sql (q\d+)\n[\s\S]*?```\n)(\nExample answer \(`--mode test`[^\n]*\n(?:\n(?:\|[^\n]*\n)+)?)?/g;
const HEADLINE = /^Example answer \(`--mode test`, the history above\): (no rows|(\d+) rows?(?:, the first (\d+) shown)?)\.?$/;

function splitRow(line: string): string[] {
  return line.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map((c) => c.trim());
}

export function guideExamples(markdown: string): Map<string, GuideExample | null> {
  const found = new Map<string, GuideExample | null>();
  for (const m of markdown.matchAll(EXAMPLE)) {
    const id = m[2]!;
    if (!m[3]) { found.set(id, null); continue; }
    const [headline, ...table] = m[3].trim().split('\n').filter((l) => l !== '');
    const h = HEADLINE.exec(headline!);
    if (!h) throw new Error(`docs/analysts.md ${id}: the example's headline "${headline}" is not of the form the test reads`);
    const total = h[1] === 'no rows' ? 0 : Number(h[2]);
    const columns = table.length ? splitRow(table[0]!) : [];
    found.set(id, { id, total, columns, rows: table.slice(2).map(splitRow) });
  }
  return found;
}

export function renderExample(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  if (rows.length === 0) return '\nExample answer (`--mode test`, the history above): no rows.\n';
  const shown = rows.slice(0, SHOWN_ROWS);
  const count = rows.length === 1 ? '1 row' : `${rows.length} rows${rows.length > shown.length ? `, the first ${shown.length} shown` : ''}`;
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return `\nExample answer (\`--mode test\`, the history above): ${count}.\n\n${[line(columns), line(columns.map(() => '---')), ...shown.map((r) => line(columns.map((c) => shownCell(r[c]))))].join('\n')}\n`;
}

/** The guide with each question's example replaced by `render(id)`. */
export function withExamples(markdown: string, render: (id: string) => string): string {
  return markdown.replace(EXAMPLE, (_all, fence: string, id: string) => `${fence}${render(id)}`);
}

/** docs/analysts/tables.md's table: each ClickHouse table and its row count ("—": not from the history, with the reason). */
const COUNT_ROW = /^\| `([a-z_]+)` \|(.*)\| ([\d,]+|— [^|]+) \|$/gm;

export function tableCounts(markdown: string): Map<string, number | null> {
  return new Map([...markdown.matchAll(COUNT_ROW)].map((m) => [m[1]!, m[3]!.startsWith('—') ? null : Number(m[3]!.replace(/,/g, ''))]));
}

export function withTableCounts(markdown: string, counts: ReadonlyMap<string, number>): string {
  return markdown.replace(COUNT_ROW, (all, table: string, middle: string, cell: string) =>
    (cell.startsWith('—') || !counts.has(table) ? all : `| \`${table}\` |${middle}| ${counts.get(table)!.toLocaleString('en-US')} |`));
}
