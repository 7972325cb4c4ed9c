import { describe, expect, it } from 'vitest';
import { normalizePoll, parseCarrierTime } from '../normalize/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { JOURNEYS, journeyPoll, makePoll, scan } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { RowConversionError, toRows, type PollRows } from './rows.ts';

const { rules } = product;
const CARRIERS = Object.keys(JOURNEYS);

function rowsFor(poll: CarrierPoll): PollRows {
  return toRows(poll, normalizePoll(poll, rules), rules.mappingVersion);
}

describe('toRows (pure)', () => {
  it('gives every event the raw status and code of the scan it came from, for every carrier', () => {
    expect(CARRIERS).toHaveLength(11);
    for (const carrier of CARRIERS) {
      for (const index of [0, 1]) {
        const poll = journeyPoll(carrier, index);
        const result = normalizePoll(poll, rules);
        if (result.kind !== 'found') throw new Error(`${carrier}: ${result.kind}`);
        const { events } = toRows(poll, result, rules.mappingVersion);
        expect(events.map((e) => e.event_id), carrier).toEqual(result.shipment.record.events.map((e) => e.event_id));
        for (const event of events) {
          // Journey scans have distinct times, so the time identifies the scan.
          const source = poll.scans.filter((s) => Math.floor(parseCarrierTime(s.occurred_at) / 1000) * 1000 === Date.parse(`${event.occurred_at.replace(' ', 'T')}Z`));
          expect(source, `${carrier} ${event.occurred_at}`).toHaveLength(1);
          expect(event.raw_status).toBe(source[0]!.raw_status);
          expect(event.raw_code).toBe(source[0]!.raw_code);
          expect(event.poll_id).toBe(poll.poll_id);
          expect(event.mapping_version).toBe(rules.mappingVersion);
        }
      }
    }
  });

  it('tells apart scans at the same instant by their event id', () => {
    const at = '2026-11-12T10:00:00';
    const poll = makePoll({
      scans: [
        scan({ occurred_at: '2026-11-11T09:00:00', raw_status: 'Manifested', raw_code: 'UD' }),
        scan({ occurred_at: at, raw_status: 'Dispatched', raw_code: 'UD', remarks: 'Out for delivery', location: 'Hub A' }),
        scan({ occurred_at: at, raw_status: 'Delivered', raw_code: 'DL', location: 'Hub A' }),
        scan({ occurred_at: at, raw_status: 'In Transit', raw_code: 'XX', remarks: 'Shipment forwarded', location: 'Hub A' }),
        // Same instant and raw status as the previous scan, another place: another event (contracts.md).
        scan({ occurred_at: at, raw_status: 'In  Transit', raw_code: 'YY', remarks: 'Shipment forwarded', location: 'Hub B' }),
        // The same scan again, spelled with other whitespace: the same event.
        scan({ occurred_at: at, raw_status: 'In Transit ', raw_code: 'YY', remarks: 'Shipment forwarded', location: 'Hub  B' }),
      ],
    });
    const result = normalizePoll(poll, rules);
    if (result.kind !== 'found') throw new Error('expected a shipment');
    const { events } = toRows(poll, result, rules.mappingVersion);
    const ids = result.shipment.record.events.map((e) => e.event_id);
    expect(events.map((e) => e.event_id)).toEqual([...new Set(ids)]);
    expect(events).toHaveLength(5);
    expect(events.map((e) => [e.raw_status, e.raw_code, e.location]).sort()).toEqual([
      ['Delivered', 'DL', 'Hub A'], ['Dispatched', 'UD', 'Hub A'], ['In  Transit', 'YY', 'Hub B'], ['In Transit', 'XX', 'Hub A'], ['Manifested', 'UD', ''],
    ]);
    for (const e of events) {
      const source = result.shipment.record.events.find((r) => r.event_id === e.event_id)!;
      expect(e.status_text).toBe(source.status_text);
    }
  });

  it('converts a delivered journey with UTC times, lane and transit days', () => {
    const poll = journeyPoll('delhivery', 0);
    const { poll: row, events, shipment } = rowsFor(poll);
    // Scans are IST without offset, 7 h apart from 2026-11-10 04:30 UTC; polled 80 h after the start.
    expect(row).toMatchObject({
      poll_id: poll.poll_id,
      carrier: 'delhivery',
      awb: '10000000000004',
      polled_at: '2026-11-13 12:30:00',
      polled_at_ms: 0,
      source: 'lookup',
      outcome: 'ok',
      origin_city: 'New Delhi',
      origin_pincode: '110001',
      destination_state: 'Karnataka',
      destination_pincode: '560001',
      service_type: 'surface',
      weight_grams: 500,
      booked_at: null,
      scan_count: 10,
      mapping_version: rules.mappingVersion,
      error: null,
      normalize_error: null,
    });
    expect(events).toHaveLength(10);
    expect(events[0]).toMatchObject({ occurred_at: '2026-11-12 19:30:00', status: 'delivered', code: 'delivered', raw_status: 'Delivered', raw_code: 'DL' });
    expect(events[9]).toMatchObject({ occurred_at: '2026-11-10 04:30:00', raw_status: 'Manifested' });
    expect(events.find((e) => e.code === 'delivery_attempted')).toMatchObject({ status: 'exception', reason_code: 'customer_unavailable', raw_status: 'Undelivered' });
    expect(shipment).toMatchObject({
      carrier: 'delhivery',
      awb: '10000000000004',
      status: 'delivered',
      stage: 'delivered',
      is_rto: 0,
      origin_pincode: '110001',
      destination_pincode: '560001',
      lane: 'delhivery:110:560',
      first_scan_at: '2026-11-10 04:30:00',
      first_physical_scan_at: '2026-11-10 11:30:00',
      last_scan_at: '2026-11-12 19:30:00',
      delivered_at: '2026-11-12 19:30:00',
      updated_at: '2026-11-13 12:30:00',
      version: Date.parse(poll.polled_at),
      poll_id: poll.poll_id,
    });
    // Pickup (2nd scan) to delivery (10th): 8 steps of 7 hours.
    expect(shipment!.transit_days).toBeCloseTo(56 / 24, 12);
    // Two failed attempts, then the delivery (the record's delivery_attempts.count): Delhivery
    // writes a failed attempt as Scan "Pending" with the NSL reason (real bodies, carrier-formats.md),
    // so the journey's "Pending / Consignee Unavailable" is an attempt as well as its "Undelivered".
    expect(shipment!.attempts).toBe(3);
  });

  it('keeps milliseconds of polled_at apart and the header as columns', () => {
    const poll = makePoll({
      polled_at: '2026-11-20T03:45:12.345Z',
      shipment: {
        origin: { office: 'Connaught Place SO', city: 'New Delhi', state: 'Delhi', pincode: '110001' },
        destination: null,
        service_type: null,
        weight_grams: null,
        booked_at: '2026-11-18T10:00:00', // IST, no offset
        estimated_delivery_at: '2026-11-25T00:00:00+05:30',
      },
      scans: [scan({ occurred_at: '2026-11-19T09:15:00', raw_status: 'Manifested' })],
    });
    const { poll: row, shipment } = rowsFor(poll);
    expect(row).toMatchObject({
      polled_at: '2026-11-20 03:45:12',
      polled_at_ms: 345,
      origin_office: 'Connaught Place SO',
      destination_city: null,
      destination_pincode: null,
      booked_at: '2026-11-18 04:30:00',
      estimated_delivery_at: '2026-11-24 18:30:00',
    });
    expect(shipment).toMatchObject({ lane: null, destination_pincode: null, transit_days: null, delivered_at: null, stage: 'awaiting_pickup' });
  });

  it('stores only the poll row for not-found, carrier-error and unreadable polls', () => {
    const notFound = rowsFor(makePoll({ outcome: 'not_found', scans: [] }));
    expect(notFound.events).toEqual([]);
    expect(notFound.shipment).toBeNull();
    expect(notFound.poll).toMatchObject({ outcome: 'not_found', scan_count: 0, scans_json: '[]', normalize_error: null });

    const carrierError = rowsFor(makePoll({ outcome: 'error', error: 'HTTP 503 from carrier', scans: [] }));
    expect(carrierError.shipment).toBeNull();
    expect(carrierError.poll).toMatchObject({ outcome: 'error', error: 'HTTP 503 from carrier', normalize_error: null });

    const unreadable = rowsFor(makePoll({ scans: [scan({ occurred_at: '2026-02-31T25:61:00', raw_status: 'Delivered' })] }));
    expect(unreadable.shipment).toBeNull();
    expect(unreadable.poll.normalize_error).toMatch(/invalid occurred_at/);
  });

  it('records the mode the poll was made for (live by default)', () => {
    const poll = journeyPoll('ekart', 0);
    const result = normalizePoll(poll, rules);
    expect(toRows(poll, result, rules.mappingVersion)).toMatchObject({ poll: { mode: 'live' }, shipment: { mode: 'live' } });
    expect(toRows(poll, result, rules.mappingVersion, 'test')).toMatchObject({ poll: { mode: 'test' }, shipment: { mode: 'test' } });
    expect(() => toRows(poll, result, rules.mappingVersion, 'prod' as 'live')).toThrow(RowConversionError);
  });

  it('refuses times ClickHouse DateTime cannot hold', () => {
    const poll = makePoll({ scans: [scan({ occurred_at: '1965-01-01T10:00:00', raw_status: 'Manifested' })] });
    expect(() => rowsFor(poll)).toThrow(RowConversionError);
  });

  it('stores no personal data even if a poll still carries some', () => {
    // The poll id is a random UUID: it is left out so its digits cannot look like a phone number's.
    const texts = [rowsFor(journeyPoll('delhivery', 0)), rowsFor(journeyPoll('bluedart', 0)), rowsFor(journeyPoll('xpressbees', 0))]
      .map((r) => JSON.stringify(r).replaceAll(r.poll.poll_id, '<poll id>'));
    for (const text of texts) {
      for (const secret of ['Ramesh', '4821', '9876543210', '98765 43210', 'SHARMA']) expect(text).not.toContain(secret);
    }
    expect(texts[0]).toContain('[redacted]');
  });
});
