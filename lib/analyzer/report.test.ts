import { describe, expect, it } from 'vitest';
import { DAY_MS as DAY } from '../time/index.ts';
import { promisedByMs, InputCollector } from './input.ts';
import { buildReport } from './report.ts';
import { FASTER_BY_DAYS } from './recommend.ts';
import type { AnalyzedShipment, NetworkLaneFigures } from './types.ts';

const T0 = Date.parse('2026-11-20T00:00:00.000Z');

function ship(over: Partial<AnalyzedShipment>): AnalyzedShipment {
  return {
    awb: 'A1', carrier: 'delhivery', order_id: null, payment_mode: null, promised_by_ms: null, result: 'found',
    status: 'in_transit', stage: 'in_transit', attempts: 0, ndr: [], transit_days: null, origin_pincode: '400001',
    destination_pincode: '700001', destination_state: 'West Bengal', lane: 'delhivery:400:700', edd_ms: null,
    delivered_ms: null, is_stuck: false, hours_since_last_scan: 5, error: null, ...over,
  };
}

const delivered = (awb: string, days: number, over: Partial<AnalyzedShipment> = {}) => ship({
  awb, status: 'delivered', stage: 'delivered', attempts: 1, transit_days: days, delivered_ms: T0, hours_since_last_scan: null, ...over,
});

function net(carrier: string, sample: number, p50: number, rto: number): NetworkLaneFigures {
  return { carrier, origin_prefix: '400', destination_prefix: '700', sample_size: sample, p50_transit_days: p50, on_time_rate: 0.9, rto_rate: rto, first_attempt_rate: 0.8 };
}

describe('buildReport', () => {
  const shipments: AnalyzedShipment[] = [
    delivered('D1', 2, { payment_mode: 'cod', edd_ms: T0 + 1, promised_by_ms: T0 - 1 }),
    delivered('D2', 4, { payment_mode: 'prepaid', edd_ms: T0 - DAY, promised_by_ms: T0 }),
    delivered('D3', 3, { attempts: 2, ndr: ['customer_unavailable'], payment_mode: 'cod' }),
    ship({ awb: 'R1', status: 'returned', stage: 'rto_in_transit', attempts: 3, ndr: ['refused', 'refused', 'address_issue'], payment_mode: 'cod' }),
    ship({ awb: 'F1', status: 'exception', stage: 'delivery_attempted', attempts: 1, ndr: ['cod_not_ready'], hours_since_last_scan: 3 }),
    ship({ awb: 'S1', is_stuck: true, hours_since_last_scan: 80 }),
    ship({ awb: 'P1', status: 'awaiting_pickup', stage: 'awaiting_pickup' }),
    ship({ awb: 'C1', status: 'cancelled', stage: 'cancelled', hours_since_last_scan: null }),
    ship({ awb: 'B1', carrier: 'bluedart', lane: null, destination_state: null, origin_pincode: null, destination_pincode: null }),
    ship({ awb: 'N1', carrier: null, result: 'not_found', stage: null, status: null }),
    ship({ awb: 'E1', result: 'error', stage: null, status: null, error: 'carrier unreachable' }),
  ];
  const report = buildReport({ shipments, network: new Map(), windowDays: 90, asOfMs: T0 });

  it('counts totals and outcomes from current_stage', () => {
    expect(report.as_of).toBe('2026-11-20T00:00:00.000Z');
    expect(report.totals).toEqual({
      shipments: 11, found: 9, not_found: 1, errors: 1,
      by_outcome: { delivered: 3, rto: 1, cancelled: 1, exception: 0, in_transit: 3, pending: 1 },
    });
  });

  it('computes every rate of a group on its own base, 4 decimals', () => {
    const d = report.by_carrier.find((g) => g.carrier === 'delhivery')!;
    // 8 found delhivery shipments; picked up = 8 - pending - cancelled = 6.
    expect(d).toMatchObject({
      shipments: 8, delivered: 3, rto: 1, cancelled: 1, pending: 1, in_transit: 2, exception: 0,
      delivered_rate: 0.5, rto_rate: 0.1667, ndr_rate: 0.5, first_attempt_rate: 0.6667,
      // 5 failed attempts: refused 2, the rest one each.
      ndr_reasons: { address_issue: 0.2, cod_not_ready: 0.2, customer_unavailable: 0.2, refused: 0.4 },
      p50_transit_days: 3, p90_transit_days: 3.8,
      // D1 on time (delivered before the EDD), D2 late; D3 had no EDD.
      on_time_rate_vs_carrier_edd: 0.5,
      // D2 delivered exactly at its promise (on time), D1 after it.
      on_time_rate_vs_promise: 0.5,
      stuck: 1,
    });
    const b = report.by_carrier.find((g) => g.carrier === 'bluedart')!;
    expect(b).toMatchObject({ shipments: 1, delivered_rate: 0, first_attempt_rate: null, p50_transit_days: null, ndr_reasons: {} });
    expect(report.by_carrier.map((g) => g.carrier)).toEqual(['delhivery', 'bluedart']);
  });

  it('groups by lane, destination state and payment mode', () => {
    expect(report.by_lane).toHaveLength(1);
    expect(report.by_lane[0]).toMatchObject({ carrier: 'delhivery', lane: 'delhivery:400:700', origin_prefix: '400', destination_prefix: '700', shipments: 8, network: null });
    expect(report.by_destination_state.map((g) => [g.state, g.shipments])).toEqual([['West Bengal', 8], ['unknown', 1]]);
    expect(report.by_payment_mode.map((g) => [g.payment_mode, g.shipments, g.rto_rate])).toEqual([['cod', 3, 0.3333], ['prepaid', 1, 0], ['unknown', 5, 0]]);
  });

  it('lists what needs attention: stuck first, then failed attempts', () => {
    expect(report.attention).toEqual([
      { awb: 'S1', carrier: 'delhivery', reason: 'stuck', current_stage: 'in_transit', hours_since_last_scan: 80, ndr_reason: null },
      { awb: 'F1', carrier: 'delhivery', reason: 'failed_attempt', current_stage: 'delivery_attempted', hours_since_last_scan: 3, ndr_reason: 'cod_not_ready' },
    ]);
  });

  it('shows network figures only from 30 samples and recommends only on such figures', () => {
    const mine = buildReport({ shipments, network: new Map([['delhivery:400:700', net('delhivery', 29, 4, 0.2)], ['bluedart:400:700', net('bluedart', 40, 2, 0.05)]]), windowDays: 90, asOfMs: T0 });
    expect(mine.by_lane[0]!.network).toBeNull();
    expect(mine.recommendations).toEqual([]);

    const network = new Map([
      ['delhivery:400:700', net('delhivery', 30, 4, 0.2)],
      ['bluedart:400:700', net('bluedart', 40, 4 - FASTER_BY_DAYS, 0.2)],
      ['dtdc:400:700', net('dtdc', 29, 1, 0)],
      ['ekart:400:700', net('ekart', 50, 4, 0.1)],
    ]);
    const r = buildReport({ shipments, network, windowDays: 90, asOfMs: T0 });
    expect(r.by_lane[0]!.network).toEqual({ sample_size: 30, p50_transit_days: 4, on_time_rate: 0.9, rto_rate: 0.2, first_attempt_rate: 0.8 });
    // ekart: RTO 10 points lower at the same p50; bluedart only faster. The lower RTO wins; dtdc (29) never counts.
    expect(r.recommendations).toHaveLength(1);
    expect(r.recommendations[0]).toMatchObject({
      lane: 'delhivery:400:700', current_carrier: 'delhivery', suggested_carrier: 'ekart',
      figures: { current: { carrier: 'delhivery', sample_size: 30, p50_transit_days: 4, rto_rate: 0.2 }, suggested: { carrier: 'ekart', sample_size: 50, p50_transit_days: 4, rto_rate: 0.1 }, window_days: 90 },
    });
    for (const rec of r.recommendations) {
      expect(rec.figures.current.sample_size).toBeGreaterThanOrEqual(30);
      expect(rec.figures.suggested.sample_size).toBeGreaterThanOrEqual(30);
    }
  });

  it('needs 5 picked-up shipments of the customer on the lane before recommending', () => {
    const few = shipments.filter((s) => ['D1', 'D2', 'P1', 'C1'].includes(s.awb));
    const network = new Map([['delhivery:400:700', net('delhivery', 30, 4, 0.2)], ['ekart:400:700', net('ekart', 50, 2, 0.1)]]);
    expect(buildReport({ shipments: few, network, windowDays: 90, asOfMs: T0 }).recommendations).toEqual([]);
  });

  it('gives null rates on an empty report', () => {
    const r = buildReport({ shipments: [], network: new Map(), windowDays: 90, asOfMs: T0 });
    expect(r.totals.shipments).toBe(0);
    expect(r.by_carrier).toEqual([]);
  });
});

describe('promisedByMs', () => {
  it('reads a date as the end of that day in IST and a bare date-time as IST', () => {
    expect(new Date(promisedByMs('2026-11-20')!).toISOString()).toBe('2026-11-20T18:29:59.999Z');
    expect(new Date(promisedByMs('2026-11-20T10:00:00')!).toISOString()).toBe('2026-11-20T04:30:00.000Z');
    expect(new Date(promisedByMs('2026-11-20T10:00:00Z')!).toISOString()).toBe('2026-11-20T10:00:00.000Z');
    expect(promisedByMs('')).toBeNull();
    expect(promisedByMs('2026-02-30')).toBeNaN();
    expect(promisedByMs('tomorrow')).toBeNaN();
  });
});

describe('InputCollector', () => {
  const ctx = {
    resolveCarrier: (name: string) => (['delhivery', 'bluedart'].includes(name.toLowerCase()) ? name.toLowerCase() : name === 'bd' ? 'bluedart' : null),
    detector: { detect: (awb: string) => ({ candidates: /^\d{12,14}$/.test(awb) ? [{ slug: 'delhivery', name: 'Delhivery', confidence: 1 }] : [], basis: 'none' as const, sampleSize: 0 }) },
  };

  it('rejects bad rows with their 1-based number and merges repeated shipments', () => {
    const c = new InputCollector(ctx);
    c.add({ awb: '1234567890104', carrier: 'Delhivery', payment_mode: 'COD' });
    c.add({ awb: 'x' });
    c.add({ awb: '1234567890104', carrier: 'delhivery', order_id: 'ORD-1', promised_by: '2026-11-21' });
    c.add({ awb: '12345670104', carrier: 'fedex' });
    c.add({ awb: 'ABCD-XYZ' });
    c.add({ awb: '12345670104', carrier: 'bd', payment_mode: 'card' });
    c.add({ awb: '1234567890204' });
    expect(c.rejected).toEqual([
      { row: 2, awb: 'x', code: 'invalid_awb' },
      { row: 4, awb: '12345670104', code: 'unsupported_carrier' },
      { row: 5, awb: 'ABCD-XYZ', code: 'carrier_not_detected' },
      { row: 6, awb: '12345670104', code: 'invalid_field' },
    ]);
    expect(c.shipments).toEqual([
      { awb: '1234567890104', carrier: 'delhivery', candidates: [], order_id: 'ORD-1', payment_mode: 'cod', order_value_inr: null, promised_by_ms: Date.parse('2026-11-21T18:29:59.999Z') },
      { awb: '1234567890204', carrier: null, candidates: ['delhivery'], order_id: null, payment_mode: null, order_value_inr: null, promised_by_ms: null },
    ]);
  });

  it('merges rows after carrier detection: a named carrier, none and the name in capitals are one shipment (issue 29)', () => {
    const c = new InputCollector(ctx);
    c.add({ awb: '1234567890104', carrier: 'delhivery' });
    c.add({ awb: '1234567890104', order_id: 'ORD-2' });
    c.add({ awb: '1234567890104', carrier: 'DELHIVERY', payment_mode: 'cod' });
    expect(c.shipments).toEqual([
      { awb: '1234567890104', carrier: 'delhivery', candidates: [], order_id: 'ORD-2', payment_mode: 'cod', order_value_inr: null, promised_by_ms: null },
    ]);
    // The row without a carrier first: it takes the named carrier, and keeps its place and fields.
    const d = new InputCollector(ctx);
    d.add({ awb: '1234567890204', order_id: 'ORD-3' });
    d.add({ awb: '1234567890104' });
    d.add({ awb: '1234567890204', carrier: 'delhivery', order_id: 'ORD-4' });
    // A carrier detection does not list stays a shipment of its own.
    d.add({ awb: '1234567890204', carrier: 'bluedart' });
    expect(d.shipments.map((s) => [s.awb, s.carrier, s.order_id])).toEqual([
      ['1234567890204', 'delhivery', 'ORD-3'], ['1234567890104', null, null], ['1234567890204', 'bluedart', null],
    ]);
  });
});
