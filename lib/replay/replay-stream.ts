import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { once } from 'node:events';
import { replayLine, type ReplayContext } from './replay-line.ts';

export interface ReplayTotals {
  lines: number;
  records: number;
  notFound: number;
  carrierErrors: number;
  invalid: number;
}

export interface ReplayStreamOptions {
  onInvalidLine(lineNumber: number, message: string): void;
  onProgress?(totals: ReplayTotals): void;
}

/** Replays NDJSON polls from `input` to `output`; a bad line is reported and counted, never fatal. */
export async function replayStream(input: Readable, output: Writable, ctx: ReplayContext, options: ReplayStreamOptions): Promise<ReplayTotals> {
  const totals: ReplayTotals = { lines: 0, records: 0, notFound: 0, carrierErrors: 0, invalid: 0 };
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    totals.lines++;
    const outcome = replayLine(line, ctx);
    if (outcome.kind === 'invalid') {
      totals.invalid++;
      options.onInvalidLine(lineNumber, outcome.message);
      continue;
    }
    if (outcome.kind === 'record') totals.records++;
    else if (outcome.kind === 'not_found') totals.notFound++;
    else totals.carrierErrors++;
    if (!output.write(JSON.stringify(outcome.output) + '\n')) await once(output, 'drain');
    if (options.onProgress && totals.lines % 1000 === 0) options.onProgress(totals);
  }
  return totals;
}
