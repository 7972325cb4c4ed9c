import { describe, expect, it } from 'vitest';
import { computeInsights, toTrackingRecord } from './index.ts';
import { expectValidRecord, normalized } from '../testutil/product.ts';
import { makePoll, scan } from '../testutil/polls.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { HOUR_MS as HOUR } from '../time/index.ts';

const at = (occurred_at: string, raw_status: string, location = 'Hub A', remarks: string | null = null) =>
  scan({ occurred_at: `${occurred_at}Z`, raw_status, location, remarks });

function insightsAt(poll: CarrierPoll, nowMs: number, lane: Parameters<typeof computeInsights>[3] = null) {
  const { record, facts } = normalized(poll);
  const full = toTrackingRecord(record, facts, { nowMs, lane, cached: false, stale: false });
  expectValidRecord(full);
  return full.insights;
}

const inTransit = makePoll({ scans: [at('2026-11-18T00:00:00', 'Manifested'), at('2026-11-18T06:00:00', 'Picked Up'), at('2026-11-19T00:00:00', 'In Transit')] });
const lastScan = Date.parse('2026-11-19T00:00:00Z');

describe('stuck rule', () => {
  it('is not stuck at exactly 72 hours since the latest scan', () => {
    expect(insightsAt(inTransit, lastScan + 72 * HOUR)).toMatchObject({ is_stuck: false, hours_since_last_scan: 72, requires_attention: false, attention_reason: null });
  });

  it('is stuck just past 72 hours, and needs attention', () => {
    expect(insightsAt(inTransit, lastScan + 72 * HOUR + 1)).toMatchObject({ is_stuck: true, requires_attention: true, attention_reason: 'stuck' });
  });

  it('is recomputed from "now": 80 hours is stuck, 5 hours is not', () => {
    expect(insightsAt(inTransit, lastScan + 80 * HOUR).is_stuck).toBe(true);
    expect(insightsAt(inTransit, lastScan + 5 * HOUR)).toMatchObject({ is_stuck: false, hours_since_last_scan: 5 });
  });

  it('never flags a shipment still awaiting pickup', () => {
    const booked = makePoll({ scans: [at('2026-11-01T00:00:00', 'Manifested')] });
    expect(insightsAt(booked, Date.parse('2026-11-20T00:00:00Z'))).toMatchObject({ is_stuck: false, current_stage: 'awaiting_pickup', transit_days_elapsed: null });
  });

  it('stuck wins over a failed attempt', () => {
    const attempted = makePoll({ scans: [at('2026-11-18T06:00:00', 'Picked Up'), at('2026-11-19T00:00:00', 'Undelivered', 'Hub A', 'Door Locked')] });
    expect(insightsAt(attempted, lastScan + 10 * HOUR).attention_reason).toBe('failed_attempt');
    expect(insightsAt(attempted, lastScan + 100 * HOUR)).toMatchObject({ attention_reason: 'stuck', current_stage: 'delivery_attempted' });
  });
});

describe('terminal states', () => {
  const delivered = makePoll({ scans: [at('2026-11-18T06:00:00', 'Picked Up'), at('2026-11-20T18:00:00', 'Delivered')] });

  it('delivered: no hours since last scan, never stuck, transit measured to delivery', () => {
    expect(insightsAt(delivered, Date.parse('2026-12-30T00:00:00Z'))).toMatchObject({
      hours_since_last_scan: null, is_stuck: false, current_stage: 'delivered', transit_days_elapsed: 2.5, requires_attention: false,
    });
  });

  it('cancelled before pickup: cancelled stage, never stuck', () => {
    const cancelled = makePoll({ scans: [at('2026-11-01T00:00:00', 'Manifested'), at('2026-11-01T06:00:00', 'Not Picked: cancelled by seller')] });
    expect(insightsAt(cancelled, Date.parse('2026-11-30T00:00:00Z'))).toMatchObject({
      hours_since_last_scan: null, is_stuck: false, current_stage: 'cancelled', requires_attention: false, is_late_vs_carrier_edd: null,
    });
  });

  it('RTO in transit is active (may get stuck); RTO delivered is terminal', () => {
    const rto = makePoll({ scans: [at('2026-11-18T06:00:00', 'Picked Up'), at('2026-11-19T00:00:00', 'Return to Origin')] });
    expect(insightsAt(rto, lastScan + 100 * HOUR)).toMatchObject({ current_stage: 'rto_in_transit', is_stuck: true });
    const back = makePoll({ carrier: 'indiapost', awb: 'RK123456789IN', scans: [
      at('2026-11-17T06:00:00', 'Item Booked'), at('2026-11-18T06:00:00', 'Item Bagged'), at('2026-11-19T00:00:00', 'Item Returned to Sender'),
    ] });
    expect(insightsAt(back, lastScan + 100 * HOUR)).toMatchObject({ current_stage: 'rto_delivered', is_stuck: false, hours_since_last_scan: null, transit_days_elapsed: 0.8 });
  });
});

describe('transit days and hubs', () => {
  it('counts from the first physical scan, excluding the booking/manifest', () => {
    expect(insightsAt(inTransit, Date.parse('2026-11-20T06:00:00Z')).transit_days_elapsed).toBe(2);
  });

  it('does not count a counter booking (postal, DTDC) as transit, though it is the pickup', () => {
    const postal = makePoll({ carrier: 'indiapost', awb: 'RK123456789IN', scans: [at('2026-11-17T06:00:00', 'Item Booked'), at('2026-11-18T06:00:00', 'Item Bagged')] });
    const { record } = normalized(postal);
    expect(record.milestones.picked_up_at).toBe('2026-11-17T06:00:00.000Z');
    expect(insightsAt(postal, Date.parse('2026-11-20T06:00:00Z')).transit_days_elapsed).toBe(2);
  });

  it('counts distinct in-transit facilities, excluding pickup and delivery locations', () => {
    const poll = makePoll({ scans: [
      at('2026-11-18T06:00:00', 'Picked Up', 'Origin Hub'),
      at('2026-11-18T09:00:00', 'In Transit', 'Origin Hub'),
      at('2026-11-18T12:00:00', 'In Transit', 'Hub A'),
      at('2026-11-18T13:00:00', 'In Transit', 'HUB A '),
      at('2026-11-19T12:00:00', 'In Transit', 'Hub B'),
      at('2026-11-20T08:00:00', 'In Transit', 'Destination DC'),
      at('2026-11-20T09:00:00', 'Out for Delivery', 'Destination DC'),
      at('2026-11-20T18:00:00', 'Delivered', 'Destination DC'),
    ] });
    expect(insightsAt(poll, Date.parse('2026-11-21T00:00:00Z')).hub_count).toBe(2);
  });
});

describe('carrier EDD comparison', () => {
  const withEdd = (poll: CarrierPoll, edd: string | null): CarrierPoll => ({ ...poll, shipment: { ...poll.shipment!, estimated_delivery_at: edd } });

  it('is late with a positive delay when now is past the EDD', () => {
    expect(insightsAt(withEdd(inTransit, '2026-11-20T00:00:00Z'), Date.parse('2026-11-22T00:00:00Z'))).toMatchObject({ is_late_vs_carrier_edd: true, delay_days_vs_carrier_edd: 2 });
  });

  it('is early with a negative delay, compared with the delivery time once delivered', () => {
    const delivered = makePoll({ scans: [at('2026-11-18T06:00:00', 'Picked Up'), at('2026-11-19T12:00:00', 'Delivered')] });
    expect(insightsAt(withEdd(delivered, '2026-11-20T00:00:00Z'), Date.parse('2026-12-22T00:00:00Z'))).toMatchObject({ is_late_vs_carrier_edd: false, delay_days_vs_carrier_edd: -0.5 });
  });

  it('is null without an EDD', () => {
    expect(insightsAt(inTransit, lastScan)).toMatchObject({ is_late_vs_carrier_edd: null, delay_days_vs_carrier_edd: null });
  });
});

describe('lane benchmark', () => {
  it('is all null below 30 delivered shipments', () => {
    expect(insightsAt(inTransit, lastScan, { median_transit_days: 3, sample_size: 29 }).benchmark).toEqual({
      median_transit_days_for_route: null, sample_size: null, expected_delivery_by: null,
    });
  });

  it('from 30 on gives the median, sample size and first physical scan + median', () => {
    expect(insightsAt(inTransit, lastScan, { median_transit_days: 3.25, sample_size: 30 }).benchmark).toEqual({
      median_transit_days_for_route: 3.3, sample_size: 30, expected_delivery_by: '2026-11-21T12:00:00.000Z',
    });
  });

  it('has a lane only when both pincodes are known', () => {
    expect(normalized(inTransit).facts.lane).toBe('delhivery:110:560');
    expect(normalized({ ...inTransit, shipment: null }).facts.lane).toBeNull();
  });
});
