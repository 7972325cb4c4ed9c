import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { replayLine, replayStream } from './index.ts';
import { expectValidRecord, product } from '../testutil/product.ts';
import { journeyPoll, makePoll, scan } from '../testutil/polls.ts';

const ctx = { rules: product.rules, resolveCarrier: (n: string) => product.registry.resolve(n) };

async function replayText(text: string) {
  const input = PassThrough.from([text]);
  const output = new PassThrough();
  const chunks: string[] = [];
  output.on('data', (c: Buffer) => chunks.push(c.toString()));
  const invalid: [number, string][] = [];
  const totals = await replayStream(input, output, ctx, { onInvalidLine: (n, m) => invalid.push([n, m]) });
  return { totals, invalid, lines: chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

describe('replay', () => {
  it('answers a poll as the API would, with insights as of polled_at and the poll_id', () => {
    const poll = journeyPoll('delhivery', 3);
    const outcome = replayLine(JSON.stringify(poll), ctx);
    expect(outcome.kind).toBe('record');
    if (outcome.kind !== 'record') return;
    const { poll_id, ...record } = outcome.output;
    expect(poll_id).toBe(poll.poll_id);
    expectValidRecord(record);
    expect(record).toMatchObject({ status: 'delivered', last_polled_at: poll.polled_at });
    expect(replayLine(JSON.stringify(poll), ctx)).toEqual(outcome);
  });

  it('accepts carrier aliases and answers not-found and carrier-error polls', () => {
    const alias = replayLine(JSON.stringify({ ...journeyPoll('bluedart', 1), carrier: 'blue-dart' }), ctx);
    expect(alias.kind === 'record' && alias.output.carrier).toBe('bluedart');
    expect(replayLine(JSON.stringify(makePoll({ outcome: 'not_found', scans: [] })), ctx)).toMatchObject({ kind: 'not_found', output: { error: { code: 'shipment_not_found' } } });
    expect(replayLine(JSON.stringify(makePoll({ outcome: 'error', error: 'HTTP 503', scans: [] })), ctx)).toMatchObject({ kind: 'carrier_error', output: { error: { code: 'upstream_error' } } });
  });

  it('reports each bad line with its number, counts it, and still processes the others', async () => {
    const good = JSON.stringify(journeyPoll('dtdc', 2));
    const badTime = JSON.stringify(makePoll({ scans: [scan({ occurred_at: 'yesterday', raw_status: 'Delivered' })] }));
    const text = [
      good,
      '{"schema": "carrier_poll.v1", "poll_id": ',
      JSON.stringify({ ...journeyPoll('dtdc', 4), carrier: 'fedex' }),
      '',
      JSON.stringify({ ...journeyPoll('dtdc', 5), schema: 'carrier_poll.v0' }),
      badTime,
      good,
    ].join('\n');
    const { totals, invalid, lines } = await replayText(text);
    expect(invalid.map(([n]) => n)).toEqual([2, 3, 5, 6]);
    expect(invalid[0]![1]).toMatch(/not valid JSON/);
    expect(invalid[1]![1]).toMatch(/unsupported carrier "fedex"/);
    expect(invalid[2]![1]).toMatch(/schema/);
    expect(invalid[3]![1]).toMatch(/occurred_at/);
    expect(totals).toMatchObject({ lines: 6, records: 2, invalid: 4 });
    expect(lines).toHaveLength(2);
  });
});
