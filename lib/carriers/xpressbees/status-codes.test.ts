/**
 * Issue 35: an Xpressbees answer as an aggregator's platform relays it (upper-case texts, a
 * `status_code` per row, history oldest first, header `status: rto` / `rto_status: delivered`) of a
 * shipment refused, returned and delivered back to the shipper. Read through the real parser
 * (poll()), the normalizer and the lookup service with its cache.
 */
import { describe, expect, it } from 'vitest';
import { createInProcessBus } from '../../bus/index.ts';
import { createMemoryCache, type TrackingCache } from '../../cache/index.ts';
import { createMetrics } from '../../metrics/index.ts';
import { requireAwb, type CarrierPoll } from '../../schemas/index.ts';
import { answer, product } from '../../testutil/product.ts';
import { TrackingService } from '../../tracking/index.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { storyOf } from '../../../test/support/carriers/round-trip.ts';
import { DAY_MS } from '../../time/index.ts';
import { createCarrierPoller } from '../poll.ts';
import type { NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';

const AWB = requireAwb('141123221085017');
const NOW = '2026-11-30T06:30:00.000Z';
const utc = (wall: string) => new Date(Date.parse(`${wall}:00+05:30`)).toISOString();

type Row = { status_code?: string; location: string; event_time: string; message: string };

/** The body (fixtures/SOURCES.md): its rows, oldest first, as the relayed answer lists them. */
const FIXTURE = 'own-aggregator-codes-refused-rto-delivered.json';
const ROWS = (JSON.parse(fixtureText('xpressbees', FIXTURE)) as { data: { history: Row[] } }).data.history;

function body(rows: Row[], header: Record<string, unknown> = { status: 'rto', rto_status: 'delivered' }): NativeResponse {
  const data = {
    awb_number: AWB, ...header,
    origin: 'Bhiwandi, Maharashtra, 421302', destination: 'Lucknow, Uttar Pradesh, 226001',
    booking_date: '2026-11-10 10:05', expected_delivery_date: '2026-11-15', package_weight: '480', shipment_mode: 'Surface',
    history: rows,
  };
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: true, data }) };
}

const withoutCodes = (rows: Row[]): Row[] => rows.map(({ status_code: _code, ...row }) => row);

async function recordOf(response: NativeResponse) {
  const poll: CarrierPoll = await pollAnswer(adapter, AWB, response, NOW);
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, NOW);
}

describe('xpressbees: refused, returned, delivered back (status codes and upper-case texts)', () => {
  it('is returned, rto_delivered, is_rto, terminal: no hours since the last scan, not stuck', async () => {
    const record = await recordOf(fixtureResponse('xpressbees', FIXTURE));
    expect(record).toEqual(await recordOf(body(ROWS)));
    expect(record).toMatchObject({ status: 'returned', is_rto: true, is_delivered: false, delivered_at: null });
    expect(record.insights).toMatchObject({ current_stage: 'rto_delivered', hours_since_last_scan: null, is_stuck: false, requires_attention: false });
  });

  it('the refusal is the one failed attempt, refused; its confirmation and the hold are no second attempt', async () => {
    const record = await recordOf(body(ROWS));
    expect(record.delivery_attempts).toEqual({
      count: 1,
      attempts: [{ at: utc('2026-11-15T17:25'), outcome: 'failed', reason_code: 'refused', reason_text: 'CONSIGNEE REFUSED TO ACCEPT' }],
    });
  });

  it('every row maps; the RT- rows are the return leg, its out-for-delivery no forward one', async () => {
    const record = await recordOf(body(ROWS));
    expect(record.events.map((e) => [e.code, e.status]).reverse()).toEqual([
      ['received', 'in_transit'], ['dispatched', 'in_transit'], ['received', 'in_transit'],
      ['out_for_delivery', 'out_for_delivery'], ['delivery_attempted', 'exception'], ['exception', 'exception'], ['exception', 'exception'],
      ['rto_initiated', 'returned'], ['dispatched', 'returned'], ['received', 'returned'], ['out_for_delivery', 'returned'], ['rto_delivered', 'returned'],
    ]);
    expect(record.milestones).toMatchObject({
      out_for_delivery_at: utc('2026-11-15T09:30'),
      first_attempt_at: utc('2026-11-15T17:25'),
      rto_initiated_at: utc('2026-11-17T12:00'),
      rto_delivered_at: utc('2026-11-21T13:40'),
      delivered_at: null,
    });
  });

  it('the same feed without status codes reads the same', async () => {
    const codeless = storyOf(await recordOf(body(withoutCodes(ROWS))));
    expect([codeless.stage, codeless.is_rto, codeless.attempts.length]).toEqual(['rto_delivered', true, 1]);
    expect(codeless).toEqual(storyOf(await recordOf(body(ROWS))));
  });

  it('newest first, as the documented answer lists them, reads the same', async () => {
    const newestFirst = storyOf(await recordOf(body([...ROWS].reverse())));
    expect(newestFirst.stage).toBe('rto_delivered');
    expect(newestFirst).toEqual(storyOf(await recordOf(body(ROWS))));
  });

  it('codes decide over texts: a DL row is a delivery, LT lost, RT-DL the return delivered', () => {
    const rules = product.rules.forCarrier('xpressbees');
    expect(rules.match('Shipment Delivered To Consignee', 'DL', null)).toMatchObject({ status: 'delivered', code: 'delivered' });
    expect(rules.match('SHIPMENT MISROUTED', 'LT', null)).toMatchObject({ status: 'exception', code: 'exception' });
    expect(rules.match('SHIPMENT MISROUTED', 'DG', null)).toMatchObject({ status: 'exception', code: 'exception' });
    expect(rules.match('SHIPMENT DELIVERED', 'RT-DL', null)).toMatchObject({ status: 'returned', code: 'rto_delivered' });
    expect(rules.match('CONSIGNEE NOT AVAILABLE', 'UD', null)).toMatchObject({ status: 'exception', code: 'delivery_attempted' });
    expect([rules.isReturnLeg('RT-IT'), rules.isReturnLeg('rt-rad'), rules.isReturnLeg('RT'), rules.isReturnLeg('IT'), rules.isReturnLeg(null)])
      .toEqual([true, true, true, false, false]);
  });
});

describe('xpressbees: a terminal outcome in the header is the record\'s even when the rows stop short', () => {
  const stopsAtReturn = ROWS.slice(0, 8);

  it('status rto / rto_status delivered with rows ending at the return\'s start: rto_delivered at the newest row\'s time', async () => {
    const record = await recordOf(body(stopsAtReturn));
    expect(record).toMatchObject({ status: 'returned', is_rto: true, status_text: 'RTO Delivered' });
    expect(record.insights).toMatchObject({ current_stage: 'rto_delivered', hours_since_last_scan: null, is_stuck: false });
    expect(record.events[0]).toMatchObject({ code: 'rto_delivered', timestamp: utc('2026-11-17T12:00'), location: '', description: 'Stated by the shipment status; no history row yet' });
    expect(record.milestones.rto_delivered_at).toBe(utc('2026-11-17T12:00'));
  });

  it('newest-first rows get the stated outcome on top too', async () => {
    const record = await recordOf(body([...stopsAtReturn].reverse()));
    expect(record.events.map((e) => e.code).slice(0, 2)).toEqual(['rto_delivered', 'rto_initiated']);
  });

  it('rows that reach the outcome get no second one, with codes or without', async () => {
    for (const rows of [ROWS, withoutCodes(ROWS)]) {
      const record = await recordOf(body(rows));
      expect(record.events.filter((e) => e.code === 'rto_delivered')).toHaveLength(1);
      expect(record.events).toHaveLength(ROWS.length);
    }
  });

  it('status delivered with rows ending out for delivery is delivered; a non-terminal header adds nothing', async () => {
    const delivered = await recordOf(body(ROWS.slice(0, 4), { status: 'delivered' }));
    expect([delivered.status, delivered.insights.current_stage, delivered.delivery_attempts.count]).toEqual(['delivered', 'delivered', 1]);
    const returning = await recordOf(body(stopsAtReturn, { status: 'rto', rto_status: 'in transit' }));
    expect([returning.status, returning.insights.current_stage, returning.events.length]).toEqual(['returned', 'rto_in_transit', 8]);
    // Without a time of its own in the answer, a return with no rows at all is still not found.
    expect((await pollAnswer(adapter, AWB, body([]), NOW)).scans).toEqual([]);
  });
});

describe('xpressbees: the lookup caches the returned shipment as terminal', () => {
  it('answers rto_delivered, keeps it without expiry, and answers it again a month later without polling', async () => {
    let nowMs = Date.parse(NOW);
    let fetches = 0;
    const answering = { ...adapter, fetch: async () => { fetches++; return body(ROWS); } };
    const carriers = createCarrierPoller({ adapters: { xpressbees: answering }, env: {}, clock: () => nowMs });
    const kept: (number | null)[] = [];
    const memory = createMemoryCache();
    const cache: TrackingCache = { ...memory, set: (key, entry, ttlMs) => { kept.push(ttlMs); return memory.set(key, entry, ttlMs); } };
    const tracking = new TrackingService({
      cache, carriers, bus: createInProcessBus(), rules: product.rules, lanes: { get: async () => null },
      metrics: createMetrics(false), clock: () => nowMs,
    });
    try {
      const first = await tracking.lookup('xpressbees', AWB, 'live');
      expect(first.kind).toBe('found');
      if (first.kind !== 'found') return;
      expect(first.record).toMatchObject({ status: 'returned', is_rto: true, cached: false });
      expect(first.record.insights).toMatchObject({ current_stage: 'rto_delivered', hours_since_last_scan: null, is_stuck: false });
      expect(kept).toEqual([null]);

      nowMs += 30 * DAY_MS;
      const later = await tracking.lookup('xpressbees', AWB, 'live');
      expect(later.kind === 'found' && later.record).toMatchObject({ cached: true, stale: false, status: 'returned' });
      expect(later.kind === 'found' && later.record.insights).toMatchObject({ hours_since_last_scan: null, is_stuck: false });
      expect(fetches).toBe(1);
    } finally {
      await carriers.close();
    }
  });
});
