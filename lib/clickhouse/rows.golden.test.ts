/**
 * Normalized records and rows stay byte-identical across speed work: digests of both, for the
 * polls of lib/testutil/golden-polls.ts, against rows.golden.json (written by the implementation
 * before the change, with UPDATE_ROWS_GOLDEN=1). Checked on both roads to rows: toRows parsing the
 * times itself, and the pipeline's processPollMessage, which reuses normalization's readings.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normalizePoll } from '../normalize/index.ts';
import { processPollMessage } from '../pipeline/process-poll.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { goldenPolls } from '../testutil/golden-polls.ts';
import { product } from '../testutil/product.ts';
import { jsonEachRowText } from './json-each-row.ts';
import { toRows, type PollRows } from './rows.ts';

const GOLDEN = new URL('./rows.golden.json', import.meta.url);
const { rules } = product;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The JSONEachRow text ClickHouse receives for one poll's rows. */
function rowsText(rows: PollRows): string {
  return jsonEachRowText([rows.poll]) + jsonEachRowText(rows.events) + (rows.shipment ? jsonEachRowText([rows.shipment]) : '');
}

interface Digest { poll_id: string; result: string; rows: string }

function viaToRows(poll: CarrierPoll): Digest {
  const result = normalizePoll(poll, rules);
  let rows: string;
  try {
    rows = rowsText(toRows(poll, result, rules.mappingVersion, 'live'));
  } catch (err) {
    rows = `error: ${(err as Error).message}`;
  }
  return { poll_id: poll.poll_id, result: sha256(JSON.stringify(result)), rows: sha256(rows) };
}

function viaPipeline(poll: CarrierPoll): string {
  const outcome = processPollMessage(JSON.stringify(poll), rules, (name) => product.registry.resolve(name), 'live');
  return sha256(outcome.kind === 'rows' ? rowsText(outcome.rows) : `error: ${outcome.reason.replace(/^cannot store poll: /, '')}`);
}

describe('normalized records and rows (golden)', () => {
  const polls = goldenPolls();
  const actual = polls.map(viaToRows);
  if (process.env.UPDATE_ROWS_GOLDEN === '1') writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 1)}\n`);
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Digest[];

  it('covers every poll', () => {
    expect(actual.map((d) => d.poll_id)).toEqual(golden.map((d) => d.poll_id));
  });

  it.each(polls.map((poll, i) => [poll.poll_id, poll, i] as const))('poll %s: same record and rows as before, on both roads', (_, poll, i) => {
    expect(actual[i]).toEqual(golden[i]);
    expect(viaPipeline(poll)).toBe(golden[i]!.rows);
  });
});
