/**
 * CSV input of an analysis, streamed through csv-parse: the header row names the columns (any
 * order, case and surrounding spaces ignored), UTF-8 with or without a BOM, quoted fields, comma or
 * semicolon — decided by which of the two the header row holds more of (spreadsheets in locales
 * with a decimal comma write semicolons). Rows are handed over one by one, never held together.
 */
import { once } from 'node:events';
import { parse, CsvError } from 'csv-parse';

export class CsvInputError extends Error {}

/** Bytes of the header row looked at to choose the delimiter. */
const HEADER_SCAN_BYTES = 64 * 1024;

function delimiterOf(head: string): ',' | ';' {
  const line = head.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  let commas = 0, semicolons = 0, quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === ',') commas++;
    else if (!quoted && ch === ';') semicolons++;
  }
  return semicolons > commas ? ';' : ',';
}

export interface CsvHandlers {
  /** The header's column names (trimmed, lower case); throw CsvInputError to refuse the file. */
  header(columns: string[]): void;
  /** One data row; false stops reading (the caller has seen enough). */
  row(record: Record<string, string>): boolean;
}

/** 'stopped' when `row` asked to stop, 'too_large' past `maxBytes`; throws CsvInputError on a malformed file. */
export async function readCsv(source: AsyncIterable<Buffer | string>, handlers: CsvHandlers, maxBytes: number): Promise<'done' | 'stopped' | 'too_large'> {
  const iterator = source[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  let ended = false;
  while (headBytes < HEADER_SCAN_BYTES) {
    const next = await iterator.next();
    if (next.done) { ended = true; break; }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    head.push(chunk);
    headBytes += chunk.length;
    if (chunk.includes(0x0a)) break;
  }
  const first = Buffer.concat(head);
  let headerSeen = false;
  const parser = parse({
    bom: true,
    delimiter: delimiterOf(first.toString('utf8')),
    columns: (names: string[]) => {
      const columns = names.map((n) => n.trim().toLowerCase());
      handlers.header(columns);
      headerSeen = true;
      return columns;
    },
    relax_column_count: true,
    skip_empty_lines: true,
  });
  let bytes = first.length;
  let outcome: 'done' | 'stopped' | 'too_large' = 'done';
  const feed = (async () => {
    if (bytes > maxBytes) { outcome = 'too_large'; parser.end(); return; }
    if (!parser.write(first)) await once(parser, 'drain');
    while (!ended && outcome === 'done') {
      const next = await iterator.next();
      if (next.done) break;
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      bytes += chunk.length;
      if (bytes > maxBytes) { outcome = 'too_large'; break; }
      if (!parser.write(chunk)) await once(parser, 'drain');
    }
    parser.end();
  })();
  feed.catch(() => undefined);
  try {
    for await (const record of parser) {
      if (outcome !== 'done') break;
      if (!handlers.row(record as Record<string, string>)) { outcome = 'stopped'; break; }
    }
  } catch (err) {
    if (err instanceof CsvInputError) throw err;
    if (err instanceof CsvError) throw new CsvInputError(`The CSV could not be read: ${err.message}`);
    throw err;
  } finally {
    if (outcome !== 'done') parser.destroy();
  }
  if (outcome === 'done') await feed;
  if (!headerSeen && outcome === 'done') throw new CsvInputError('The CSV is empty: it needs a header row naming an awb column.');
  return outcome;
}
