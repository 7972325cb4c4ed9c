import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizePoll } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { journeyPoll } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { shipmentsPolledBetween, storedEventsFor, storedEventsForPollWindow, type StoredEvent } from './events.ts';
import { toRows, type PollRows } from './rows.ts';
import { countOf, createTestDatabase, type TestDatabase } from './testutil/database.ts';
import { ClickHouseWriter } from './writer.ts';

const { rules } = product;

function expectedEvents(poll: CarrierPoll): StoredEvent[] {
  const result = normalizePoll(poll, rules);
  if (result.kind !== 'found') throw new Error('expected a shipment');
  const rows = toRows(poll, result, rules.mappingVersion);
  return rows.events.map((e) => ({
    event_id: e.event_id,
    carrier: e.carrier,
    awb: e.awb,
    occurred_at: new Date(Date.parse(`${e.occurred_at.replace(' ', 'T')}Z`)).toISOString(),
    status: e.status,
    code: e.code,
    reason_code: e.reason_code,
    raw_status: e.raw_status,
    raw_code: e.raw_code,
    mapping_version: e.mapping_version,
  }));
}

async function collect(iterable: AsyncIterable<StoredEvent[]>): Promise<{ batches: number; events: StoredEvent[] }> {
  const events: StoredEvent[] = [];
  let batches = 0;
  for await (const batch of iterable) {
    batches++;
    events.push(...batch);
  }
  return { batches, events };
}

describe('stored events for replay --diff (real ClickHouse)', () => {
  let db: TestDatabase;
  // Polled at 2026-11-13 12:30:00.000Z (journeyPoll: start + 80 h); the third one 1 ms later.
  const early = journeyPoll('dtdc', 1);
  const other = journeyPoll('ekart', 2);
  const late = { ...journeyPoll('bluedart', 3), polled_at: '2026-11-13T12:30:00.001Z' };
  const outside = journeyPoll('shadowfax', 4, Date.UTC(2026, 9, 1, 4, 30));

  beforeAll(async () => {
    db = await createTestDatabase();
    const writer = new ClickHouseWriter(db.client);
    writer.write([early, other, late, outside].map((p) => toRows(p, normalizePoll(p, rules), rules.mappingVersion)));
    await writer.close();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('returns the stored events of given shipments, newest first, with what the diff compares', async () => {
    const events = await storedEventsFor(db.client, [
      { carrier: 'dtdc', awb: early.awb.toLowerCase() }, // AWBs are matched uppercased, as stored
      { carrier: 'ekart', awb: other.awb },
      { carrier: 'ekart', awb: other.awb },
      { carrier: 'dtdc', awb: 'NO-SUCH-AWB' },
    ]);
    expect(events).toEqual([...expectedEvents(early), ...expectedEvents(other)]);
    expect(await storedEventsFor(db.client, [])).toEqual([]);
  });

  it('streams the events of the shipments polled in a window, to the millisecond', async () => {
    const polledAt = Date.parse(early.polled_at);
    const all = await collect(storedEventsForPollWindow(db.client, { since: polledAt, until: polledAt + 2 }, { batchSize: 7 }));
    expect(all.events).toEqual([...expectedEvents(late), ...expectedEvents(early), ...expectedEvents(other)]);
    expect(all.batches).toBe(Math.ceil(30 / 7));

    const firstMs = await collect(storedEventsForPollWindow(db.client, { since: early.polled_at, until: late.polled_at }));
    expect(new Set(firstMs.events.map((e) => e.carrier))).toEqual(new Set(['dtdc', 'ekart']));
    const lastMs = await collect(storedEventsForPollWindow(db.client, { since: late.polled_at }));
    expect(new Set(lastMs.events.map((e) => e.carrier))).toEqual(new Set(['bluedart']));
    const onlyEkart = await collect(storedEventsForPollWindow(db.client, { since: polledAt, until: polledAt + 2, carriers: ['ekart'] }));
    expect(onlyEkart.events).toEqual(expectedEvents(other));
    expect((await collect(storedEventsForPollWindow(db.client, { since: polledAt, carriers: [] }))).events).toEqual([]);

    expect(await shipmentsPolledBetween(db.client, { since: '2026-10-01T00:00:00Z', until: '2026-11-01T00:00:00Z' })).toEqual([{ carrier: 'shadowfax', awb: outside.awb }]);
  });

  it('after a re-normalization with other rules, reads the newest version of each event once', async () => {
    const poll = journeyPoll('indiapost', 5);
    const result = normalizePoll(poll, rules);
    const original = toRows(poll, result, rules.mappingVersion);
    // The same poll under a rule set that maps the delivery differently.
    const remapped: PollRows = {
      poll: { ...original.poll, mapping_version: 'rules-v2' },
      events: original.events.map((e) => ({ ...e, mapping_version: 'rules-v2', code: e.code === 'delivered' ? 'exception' : e.code })),
      shipment: original.shipment && { ...original.shipment, mapping_version: 'rules-v2' },
    };
    const writer = new ClickHouseWriter(db.client);
    writer.write(original);
    await writer.flush();
    writer.write(remapped);
    await writer.flush();
    writer.write(original); // the old version re-delivered: already stored, skipped
    await writer.close();

    const events = await storedEventsFor(db.client, [{ carrier: 'indiapost', awb: poll.awb }]);
    expect(events.map((e) => e.event_id)).toEqual(original.events.map((e) => e.event_id));
    expect(new Set(events.map((e) => e.mapping_version))).toEqual(new Set(['rules-v2']));
    expect(events[0]?.code).toBe('exception');
    // Both versions are rows until ReplacingMergeTree merges them; FINAL shows the merged view.
    expect(await countOf(db.client, `SELECT count() AS c FROM events WHERE awb = '${poll.awb}'`)).toBe(20);
    expect(await countOf(db.client, `SELECT count() AS c FROM events FINAL WHERE awb = '${poll.awb}'`)).toBe(10);
  });
});
