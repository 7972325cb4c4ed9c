/**
 * CSV input of an analysis, streamed through csv-parse: the header row names the columns (any
 * order, case and surrounding spaces ignored), UTF-8 with or without a BOM, quoted fields, comma or
 * semicolon — decided by which of the two the header row holds more of (spreadsheets in locales
 * with a decimal comma write semicolons). Rows are handed over one by one, never held together.
 *
 * A hostile file must not hold the API (issue 29: a 10 MB single-line header of `,x` cost seconds of
 * parse CPU in one go): the header row is checked before csv-parse sees a byte — at most 64 KiB and
 * MAX_CSV_COLUMNS columns — every later line is at most 64 KiB too, and the parser is fed slices of
 * at most 64 KiB with a turn of the event loop after each, so one upload never holds it for longer
 * than one slice's parse.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse, CsvError } from 'csv-parse';

export class CsvInputError extends Error {}

/** Longest line, the header row included (an analysis's row is a few hundred bytes). */
export const MAX_CSV_LINE_BYTES = 64 * 1024;
/** Most columns a header row may name: the contract's seven and many more a spreadsheet export adds. */
export const MAX_CSV_COLUMNS = 256;
/** The parser's portion between two turns of the event loop. */
const SLICE_BYTES = 64 * 1024;

/** Columns of a header line: its delimiters outside quotes, plus one. */
function columnCount(line: string, delimiter: string): number {
  let count = 1, quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === delimiter) count++;
  }
  return count;
}

/** Counts the bytes since the last line feed across chunks; throws past MAX_CSV_LINE_BYTES. */
class LineGuard {
  private run = 0;
  check(chunk: Buffer): void {
    const last = chunk.lastIndexOf(0x0a);
    if (last === -1) {
      this.run += chunk.length;
    } else {
      // The longest line inside the chunk, the first one continuing the run before it.
      let from = 0;
      for (let lf = chunk.indexOf(0x0a); lf !== -1; lf = chunk.indexOf(0x0a, from)) {
        if ((from === 0 ? this.run : 0) + lf - from > MAX_CSV_LINE_BYTES) throw tooLong();
        from = lf + 1;
      }
      this.run = chunk.length - last - 1;
    }
    if (this.run > MAX_CSV_LINE_BYTES) throw tooLong();
  }
}

/** The parser took its buffered input, or was destroyed (the reader stopped): either way, go on. */
function drained(parser: NodeJS.ReadWriteStream & { destroyed: boolean }): Promise<void> {
  if (parser.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { parser.off('drain', done); parser.off('close', done); resolve(); };
    parser.once('drain', done);
    parser.once('close', done);
  });
}

const tooLong = () => new CsvInputError(`A line of the CSV is longer than ${MAX_CSV_LINE_BYTES / 1024} KiB; an analysis's rows are a few hundred bytes. ` +
  `Check the file's line endings and delimiter.`);

function delimiterOf(line: string): ',' | ';' {
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

/**
 * 'stopped' when `row` asked to stop, 'too_large' past `maxBytes`; throws CsvInputError on a
 * malformed file, a header row over 64 KiB or MAX_CSV_COLUMNS columns, or a line over 64 KiB —
 * without parsing the rest. The source is left unread past the point of refusal: the caller closes
 * the connection it comes on.
 */
export async function readCsv(source: AsyncIterable<Buffer | string>, handlers: CsvHandlers, maxBytes: number): Promise<'done' | 'stopped' | 'too_large'> {
  const iterator = source[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  let ended = false;
  let headerEnd = -1;
  // The header row, read raw: up to its line feed, never more than 64 KiB of it.
  while (headerEnd === -1 && headBytes <= MAX_CSV_LINE_BYTES) {
    const next = await iterator.next();
    if (next.done) { ended = true; break; }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    const lf = chunk.indexOf(0x0a);
    if (lf !== -1) headerEnd = headBytes + lf;
    head.push(chunk);
    headBytes += chunk.length;
  }
  const first = Buffer.concat(head);
  const headerBytes = headerEnd === -1 ? first.length : headerEnd;
  if (headerBytes > MAX_CSV_LINE_BYTES) {
    throw new CsvInputError(`The CSV's header row is longer than ${MAX_CSV_LINE_BYTES / 1024} KiB; ` +
      `it should name the columns (awb, carrier, order_id, ...) on one short line.`);
  }
  const headerLine = first.subarray(0, headerBytes).toString('utf8').replace(/^\uFEFF/, '');
  const delimiter = delimiterOf(headerLine);
  const columns = columnCount(headerLine, delimiter);
  if (columns > MAX_CSV_COLUMNS) {
    throw new CsvInputError(`The CSV's header row names ${columns} columns; at most ${MAX_CSV_COLUMNS} are read ` +
      `(awb, carrier, order_id, payment_mode, order_value_inr, promised_by and any others).`);
  }
  const lines = new LineGuard();
  let headerSeen = false;
  const parser = parse({
    bom: true,
    delimiter,
    columns: (names: string[]) => {
      const columns = names.map((n) => n.trim().toLowerCase());
      handlers.header(columns);
      headerSeen = true;
      return columns;
    },
    relax_column_count: true,
    skip_empty_lines: true,
  });
  let bytes = 0;
  let outcome: 'done' | 'stopped' | 'too_large' = 'done';
  let refused: CsvInputError | null = null;
  /** Feeds one chunk in slices, a turn of the event loop after each; false once it should stop. */
  const write = async (chunk: Buffer): Promise<boolean> => {
    bytes += chunk.length;
    if (bytes > maxBytes) { outcome = 'too_large'; return false; }
    lines.check(chunk);
    for (let at = 0; at < chunk.length && outcome === 'done'; at += SLICE_BYTES) {
      if (!parser.write(chunk.subarray(at, at + SLICE_BYTES))) await drained(parser);
      await nextTurn();
    }
    return outcome === 'done';
  };
  const feed = (async () => {
    try {
      let more = await write(first);
      while (more && !ended) {
        const next = await iterator.next();
        if (next.done) break;
        more = await write(typeof next.value === 'string' ? Buffer.from(next.value) : next.value);
      }
    } catch (err) {
      if (!(err instanceof CsvInputError)) throw err;
      refused = err;
      parser.destroy(err);
      return;
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
    if (refused) throw refused;
    if (err instanceof CsvError) throw new CsvInputError(`The CSV could not be read: ${err.message}`);
    throw err;
  } finally {
    if (outcome !== 'done') parser.destroy();
  }
  if (refused) throw refused;
  if (outcome === 'done') await feed;
  if (refused) throw refused;
  if (!headerSeen && outcome === 'done') throw new CsvInputError('The CSV is empty: it needs a header row naming an awb column.');
  return outcome;
}
