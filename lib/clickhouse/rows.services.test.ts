import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizePoll } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { JOURNEYS, journeyPoll } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { toRows, type PollRows } from './rows.ts';
import { createTestDatabase, rowsOf, type TestDatabase } from './testutil/database.ts';
import { ClickHouseWriter } from './writer.ts';

const { rules } = product;
const CARRIERS = Object.keys(JOURNEYS);

function rowsFor(poll: CarrierPoll): PollRows {
  return toRows(poll, normalizePoll(poll, rules), rules.mappingVersion);
}

describe('rows in the real ClickHouse', () => {
  let db: TestDatabase;
  const polls = CARRIERS.map((carrier, i) => journeyPoll(carrier, i));
  const expected = polls.map(rowsFor);

  beforeAll(async () => {
    db = await createTestDatabase();
    const writer = new ClickHouseWriter(db.client);
    writer.write(expected);
    await writer.close();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('lands every poll, event and shipment with the converted values', async () => {
    const pollRows = await rowsOf<Record<string, unknown>>(db.client, 'SELECT * FROM carrier_polls ORDER BY carrier');
    expect(pollRows).toHaveLength(polls.length);
    for (const stored of pollRows) {
      const want = expected.find((r) => r.poll.poll_id === stored.poll_id)!.poll;
      const { ingested_at, ingest_version, ...rest } = stored;
      expect(rest).toEqual(want);
      expect(typeof ingested_at).toBe('string');
      expect(Number(ingest_version)).toBeGreaterThan(0);
    }

    const eventRows = await rowsOf<Record<string, unknown>>(db.client, 'SELECT * FROM events ORDER BY carrier, occurred_at DESC');
    expect(eventRows).toHaveLength(expected.reduce((n, r) => n + r.events.length, 0));
    for (const stored of eventRows) {
      const want = expected.flatMap((r) => r.events).find((e) => e.event_id === stored.event_id);
      const { ingested_at: _a, ingest_version: _v, ...rest } = stored;
      expect(rest).toEqual(want);
    }

    const shipmentRows = await rowsOf<Record<string, unknown>>(db.client, 'SELECT * FROM shipments ORDER BY carrier');
    expect(shipmentRows).toHaveLength(polls.length);
    for (const stored of shipmentRows) {
      const want = expected.find((r) => r.shipment?.poll_id === stored.poll_id)!.shipment!;
      const { ingested_at: _a, ingest_version: _v, version, ...rest } = stored;
      const { version: wantVersion, ...wantRest } = want;
      expect(rest).toEqual(wantRest);
      expect(Number(version)).toBe(wantVersion); // UInt64 comes back as a string
    }
  });

  it('stores UTC instants: epoch seconds match the API timestamps', async () => {
    const poll = polls[0]!;
    const result = normalizePoll(poll, rules);
    if (result.kind !== 'found') throw new Error('expected a shipment');
    const stored = await rowsOf<{ event_id: string; t: string }>(db.client, `SELECT event_id, toUnixTimestamp(occurred_at) AS t FROM events WHERE carrier = 'delhivery'`);
    for (const event of result.shipment.record.events) {
      expect(Number(stored.find((s) => s.event_id === event.event_id)?.t)).toBe(Date.parse(event.timestamp) / 1000);
    }
    const [shipment] = await rowsOf<{ lane: string; d: number; first: string; delivered: string }>(
      db.client,
      `SELECT lane, transit_days AS d, toUnixTimestamp(first_physical_scan_at) AS first, toUnixTimestamp(delivered_at) AS delivered FROM shipments WHERE carrier = 'delhivery'`,
    );
    expect(shipment).toMatchObject({ lane: 'delhivery:110:560' });
    expect(Number(shipment!.first)).toBe(result.shipment.facts.first_physical_scan_ms! / 1000);
    expect(Number(shipment!.delivered)).toBe(Date.parse(result.shipment.record.delivered_at!) / 1000);
    expect(shipment!.d).toBeCloseTo(56 / 24, 12);
  });
});
