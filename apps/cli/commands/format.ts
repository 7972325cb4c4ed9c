/** Text for a person shared by the commands that print tables (analyze, lanes, predict, sql). */

/** A rate 0..1 as a percentage with one decimal; — where there is no figure. */
export const formatPercent = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)} %`);

/** Days with one decimal; — where there is no figure. */
export const formatDays = (v: number | null) => (v === null ? '—' : v.toFixed(1));

/**
 * Aligned columns two spaces apart: the header, a rule of dashes, then the rows. Columns where
 * `leftAligned(i)` holds are padded on the right (text), the others on the left (figures).
 */
export function alignedTable(header: readonly string[], rows: readonly (readonly string[])[], leftAligned: (column: number) => boolean): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const pad = (cell: string, i: number) => (leftAligned(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!));
  const line = (cells: readonly string[]) => cells.map(pad).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

/**
 * A value of a query's answer as a person reads it (cli sql's table, the analysts' guide's example
 * answers): whole numbers as they are, other numbers to 4 decimals (2.0798611111111107 → 2.0799,
 * 1.5000 → 1.5), NULL, objects and arrays as JSON. ClickHouse's JSON sends 64-bit integers as
 * strings, so numbers are recognised in text too.
 */
export function shownValue(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'object') return JSON.stringify(value);
  const text = String(value);
  if (/^-?\d+\.\d+(e-?\d+)?$|^-?\d+e-?\d+$/.test(text)) return String(Number(Number(text).toFixed(4)));
  return text;
}
