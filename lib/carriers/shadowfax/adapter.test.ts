import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/shadowfax.ts';
import { istIsoLocal } from '../../sandbox/ist.ts';
import type { ScenarioAnswer, SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { makePoll } from '../../testutil/polls.ts';
import { answer } from '../../testutil/product.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { recordingSend } from '../../../test/support/carriers/recording-send.ts';
import { expectOk, normalizeAnswer } from '../../../test/support/carriers/round-trip.ts';
import { asNativeResponse } from '../../../test/support/carriers/sandbox-transport.ts';
import { expectStepEvents, type StepEvent } from '../../../test/support/carriers/step-events.ts';
import { HOUR, shipmentBuilder, storyStep } from '../../../test/support/carriers/story.ts';
import type { NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';
import { requireAwb } from '../../schemas/index.ts';

const AWB = requireAwb('SF1234567890X');
const NOW = Date.UTC(2026, 10, 20, 6, 30); // 12:00 IST

function ok(body: string, status = 200): NativeResponse {
  return { status, headers: { 'content-type': 'application/json' }, body };
}

/** A hand-written answer in Shadowfax's shape (oldest first, empty remarks, microsecond times). */
const REAL_BODY = JSON.stringify({
  message: 'Success',
  order_details: {
    awb_number: AWB,
    status: 'delivered',
    status_display: 'Delivered',
    pickup_details: { city: 'Mumbai', state: 'Maharashtra', pincode: 400001 },
    drop_details: { city: 'Kolkata', state: 'West Bengal', pincode: '700001' },
    promised_delivery_date: '2026-11-19T23:59:59',
    weight: 0.45,
  },
  tracking_details: [
    { status: 'New', status_id: 'new', location: 'Mumbai_Andheri_FM', created: '2026-11-14T18:02:11.482913', remarks: '' },
    { status: 'Picked', status_id: 'picked', location: 'Mumbai_Andheri_FM', created: '2026-11-15T11:40:00', remarks: '' },
    { status: 'Received at forward hub', status_id: 'recd_at_fwd_hub', location: 'Bhiwandi_Hub', created: '2026-11-15 22:15:09', remarks: null },
    { status: 'Bag in transit', status_id: 'bag_in_transit', location: 'Bhiwandi_Hub', created: '2026-11-16T02:00:00+05:30', remarks: '' },
    { status: 'On hold', status_id: 'on_hold', location: 'Kolkata_Dankuni_Hub', created: '2026-11-17T09:00:00', remarks: 'Vehicle breakdown' },
    { status: 'Received at DC', status_id: 'recd_at_fwd_dc', location: 'Kolkata_Park_Street_DC', created: '2026-11-18T07:30:00', remarks: '' },
    { status: 'Out for delivery', status_id: 'ofd', location: 'Kolkata_Park_Street_DC', created: '2026-11-18T09:05:00', remarks: '' },
    { status: 'Customer not available', status_id: 'na', location: 'Kolkata_Park_Street_DC', created: '2026-11-18T17:45:00', remarks: 'PARTY NOT AVAILABLE' },
    { status: 'Out for delivery', status_id: 'ofd', location: 'Kolkata_Park_Street_DC', created: '2026-11-19T09:10:00', remarks: '' },
    { status: 'Delivered', status_id: 'delivered', location: 'Kolkata_Park_Street_DC', created: '2026-11-19T13:20:45.1Z', remarks: 'Delivered to Ramesh 9876543210' },
  ],
});

describe('shadowfax fetch', () => {
  it('GETs the v4 track path with a DRF token header', async () => {
    const { sent, send } = recordingSend(() => ok('{}'));
    const response = await adapter.fetch(AWB, { baseUrl: 'http://127.0.0.1:4010/shadowfax', credentials: { token: 'k3y' } }, send);
    expect(response.body).toBe('{}');
    expect(sent).toEqual([{
      method: 'GET',
      url: `http://127.0.0.1:4010/shadowfax/api/v4/clients/orders/${AWB}/track/`,
      headers: { Authorization: 'Token k3y', Accept: 'application/json' },
    }]);
  });
});

describe('shadowfax parse', () => {
  it('reads header and scans in the carrier order, status_id as raw_code', () => {
    const parsed = expectOk(adapter.parse(AWB, ok(REAL_BODY)));
    expect(parsed.shipment).toEqual({
      origin: { city: 'Mumbai', state: 'Maharashtra', pincode: '400001' },
      destination: { city: 'Kolkata', state: 'West Bengal', pincode: '700001' },
      service_type: null,
      weight_grams: 450,
      booked_at: null,
      estimated_delivery_at: '2026-11-19T23:59:59',
    });
    expect(parsed.scans.map((s) => s.raw_code)).toEqual(['new', 'picked', 'recd_at_fwd_hub', 'bag_in_transit', 'on_hold', 'recd_at_fwd_dc', 'ofd', 'na', 'ofd', 'delivered']);
    expect(parsed.scans[0]).toEqual({
      occurred_at: '2026-11-14T18:02:11.482913', raw_status: 'New', raw_code: 'new', remarks: null, location: 'Mumbai_Andheri_FM',
    });
    expect(parsed.scans[7]!.remarks).toBe('PARTY NOT AVAILABLE');
    // The parser keeps personal data: removing it is the caller's job.
    expect(parsed.scans[9]!.remarks).toBe('Delivered to Ramesh 9876543210');
  });

  it('accepts a space for T and keeps explicit offsets', () => {
    const parsed = expectOk(adapter.parse(AWB, ok(REAL_BODY)));
    expect(parsed.scans[2]!.occurred_at).toBe('2026-11-15T22:15:09');
    expect(parsed.scans[3]!.occurred_at).toBe('2026-11-16T02:00:00+05:30');
    expect(parsed.scans[9]!.occurred_at).toBe('2026-11-19T13:20:45.1Z');
  });

  it('maps the hand-written journey through the product rules', () => {
    const parsed = expectOk(adapter.parse(AWB, ok(REAL_BODY)));
    const record = answer(makePoll({ carrier: 'shadowfax', awb: AWB, polled_at: '2026-11-20T06:30:00.000Z', shipment: parsed.shipment, scans: parsed.scans }));
    expect(record.status).toBe('delivered');
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual(['customer_unavailable', null]);
    expect(record.events.find((e) => e.code === 'exception')?.reason_code).toBe('other');
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('answers not_found for the carrier 404 and a "no order" message', () => {
    expect(adapter.parse(AWB, ok('{"detail":"Not found."}', 404))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, ok('{"message":"No order found for the given AWB"}'))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, ok('{"message":"Success","order_details":{"status":"new"},"tracking_details":[]}'))).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['truncated JSON', ok(REAL_BODY.slice(0, 300))],
    ['an HTML error page', ok('<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>')],
    ['an empty 200', ok('')],
    ['a 404 HTML page', ok('<html><body>Not Found</body></html>', 404)],
    ['a 503', ok('Service Unavailable', 503)],
    ['a rejected token', ok('{"detail":"Invalid token."}', 401)],
    ['a scan without status_id', ok(REAL_BODY.replace('"status_id":"picked",', ''))],
    ['an impossible date', ok(REAL_BODY.replace('2026-11-15T11:40:00', '2026-02-30T11:40:00'))],
    ['a body without tracking_details', ok('{"message":"Success","order_details":{"status":"new"}}')],
  ])('answers error for %s', (_name, response) => {
    expect(adapter.parse(AWB, response).outcome).toBe('error');
  });

  it('survives 2000 mutations of a realistic body', () => {
    fuzzParser(adapter, AWB, ok(REAL_BODY), 2000);
  });
});

// ---------------------------------------------------------------------------------------------
// Round trip: sandbox renderer → adapter → normalization.

const step = (kind: StepKind, hoursAgo: number, extra: Partial<SandboxStep> = {}) => storyStep(kind, NOW - hoursAgo * HOUR, `Hub_${hoursAgo}`, extra);

const shipmentOf = shipmentBuilder({
  carrier: 'shadowfax', awb: AWB, scenario: 2, lane: 0,
  origin: { city: 'New Delhi', state: 'Delhi', pincode: '110001' },
  destination: { city: 'Bengaluru', state: 'Karnataka', pincode: '560001' },
  edd: NOW + 30 * HOUR, weightGrams: 750, serviceType: 'surface',
});

const route = renderer.routes[0]!;

function request(headers: Record<string, string> = { authorization: 'Token sandbox' }) {
  return { method: 'GET', path: `/api/v4/clients/orders/${AWB}/track/`, query: {}, headers, body: '' };
}

function render(scenario: ScenarioAnswer, headers?: Record<string, string>): NativeResponse {
  return asNativeResponse(route.handle(request(headers), { awb: AWB }, () => scenario));
}

const roundTrip = (shipment: SandboxShipment) => normalizeAnswer(adapter, AWB, render({ kind: 'shipment', shipment }), NOW);

/** Every step kind, each an hour apart, with what the shadowfax rules make of it. */
const EVERY_KIND: [SandboxStep, StepEvent][] = [
  [step('booked', 40), { code: 'booked', status: 'order_placed' }],
  [step('picked_up', 39), { code: 'picked_up' }],
  [step('hub_in', 38), { code: 'received' }],
  // Mapping gap: Shadowfax has no bagging status; a bag shows up as bag_in_transit (dispatched).
  [step('bagged', 37), { code: 'bagged' }],
  [step('hub_out', 36), { code: 'dispatched' }],
  [step('hold', 35, { remark: 'Heavy rain in the area', ndr: 'other' }), { code: 'exception', status: 'in_transit', reason: 'other' }],
  [step('unmapped', 34), { code: 'unknown' }],
  [step('out_for_delivery', 33), { code: 'out_for_delivery' }],
  [step('attempt_failed', 32, { ndr: 'customer_unavailable' }), { code: 'delivery_attempted', status: 'exception', reason: 'customer_unavailable' }],
  [step('attempt_failed', 31, { ndr: 'address_issue' }), { code: 'delivery_attempted', reason: 'address_issue' }],
  [step('attempt_failed', 30, { ndr: 'refused', remark: 'CONSIGNEE REFUSED TO ACCEPT' }), { code: 'delivery_attempted', reason: 'refused' }],
  [step('attempt_failed', 29, { ndr: 'premises_closed' }), { code: 'delivery_attempted', reason: 'premises_closed' }],
  [step('attempt_failed', 28, { ndr: 'cod_not_ready' }), { code: 'delivery_attempted', reason: 'cod_not_ready' }],
  [step('attempt_failed', 27, { ndr: 'other', remark: 'OTP code mismatch' }), { code: 'delivery_attempted', reason: 'other' }],
  [step('delivered', 26, { remark: 'Delivered to Ramesh 9876543210' }), { code: 'delivered', status: 'delivered' }],
  [step('lost', 25), { code: 'exception', status: 'exception' }],
  [step('cancelled', 24), { code: 'exception', status: 'cancelled' }],
  [step('rto_initiated', 23), { code: 'rto_initiated', status: 'returned' }],
  [step('rto_in_transit', 22), { code: 'dispatched', status: 'returned' }],
  [step('rto_delivered', 21), { code: 'rto_delivered', status: 'returned' }],
];

describe('shadowfax round trip through the sandbox renderer', () => {
  it('maps every step kind to the expected event at the right instant', () => {
    const { record } = roundTrip(shipmentOf(EVERY_KIND.map(([s]) => s)));
    expect(record.events).toHaveLength(EVERY_KIND.length);
    expectStepEvents(record, EVERY_KIND);
  });

  it('keeps the header and lists scans oldest first', () => {
    const steps = [step('booked', 50), step('picked_up', 40), step('hub_in', 30), step('out_for_delivery', 4)];
    const { parsed, record } = roundTrip(shipmentOf(steps));
    expect(parsed.shipment).toEqual({
      origin: { city: 'New Delhi', state: 'Delhi', pincode: '110001' },
      destination: { city: 'Bengaluru', state: 'Karnataka', pincode: '560001' },
      // The sandbox writes the real shape: order_date and promised_delivery_date are days (IST).
      service_type: null, weight_grams: 750, booked_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T00:00:00$/),
      estimated_delivery_at: `${istIsoLocal(NOW + 30 * HOUR).slice(0, 10)}T23:59:59`,
    });
    // `created` in UTC with Z, as real answers write it.
    expect(parsed.scans.map((s) => s.occurred_at)).toEqual(steps.map((s) => new Date(s.at).toISOString().replace('.000Z', 'Z')));
    expect(record.status).toBe('out_for_delivery');
    expect(record.estimated_delivery_at).toBe(new Date(Date.parse(`${istIsoLocal(NOW + 30 * HOUR).slice(0, 10)}T23:59:59+05:30`)).toISOString());
    expect(record.shipment.weight_grams).toBe(750);
    expect(record.origin?.pincode).toBe('110001');
  });

  it('emits shuffled steps exactly in the given order', () => {
    const steps = [step('hub_in', 5), step('booked', 9), step('hub_out', 4), step('picked_up', 8)];
    const { parsed, record } = roundTrip(shipmentOf(steps, { shuffled: true }));
    expect(parsed.scans.map((s) => s.raw_code)).toEqual(['recd_at_fwd_hub', 'new', 'bag_in_transit', 'picked']);
    expect(record.events.map((e) => e.code)).toEqual(['dispatched', 'received', 'picked_up', 'booked']);
  });

  it('tells the terminal stories apart', () => {
    const delivered = roundTrip(shipmentOf([step('booked', 60), step('picked_up', 50), step('out_for_delivery', 30),
      step('attempt_failed', 26, { ndr: 'customer_unavailable' }), step('out_for_delivery', 6), step('delivered', 3)])).record;
    expect(delivered.status).toBe('delivered');
    expect(delivered.delivery_attempts.count).toBe(2);

    const returned = roundTrip(shipmentOf([step('booked', 60), step('picked_up', 50), step('attempt_failed', 40, { ndr: 'refused' }),
      step('rto_initiated', 30), step('rto_in_transit', 20), step('rto_delivered', 2)])).record;
    expect(returned.status).toBe('returned');
    expect(returned.is_rto).toBe(true);
    expect(returned.milestones.rto_delivered_at).toBe(new Date(NOW - 2 * HOUR).toISOString());

    const cancelled = roundTrip(shipmentOf([step('booked', 30), step('cancelled', 10)])).record;
    expect(cancelled.status).toBe('cancelled');

    const lost = roundTrip(shipmentOf([step('booked', 60), step('picked_up', 50), step('lost', 5)])).record;
    expect(lost.status).toBe('exception');
    expect(lost.events[0]!.code).toBe('exception');

    const held = roundTrip(shipmentOf([step('picked_up', 50), step('hold', 20, { remark: 'Vehicle breakdown', ndr: 'other' }), step('hub_in', 5)])).record;
    expect(held.status).toBe('in_transit');
  });

  it('puts remarks with personal data into the native body', () => {
    const remark = 'Call Suresh on +91 98765 43210, OTP 4821';
    const response = render({ kind: 'shipment', shipment: shipmentOf([step('booked', 9), step('out_for_delivery', 2, { remark })]) });
    expect(response.body).toContain(remark);
    expect(expectOk(adapter.parse(AWB, response)).scans[1]!.remarks).toBe(remark);
  });
});

describe('shadowfax sandbox failure answers', () => {
  it('rejects a missing or wrong token DRF-style', () => {
    const shipment = shipmentOf([step('booked', 2)]);
    const missing = render({ kind: 'shipment', shipment }, {});
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body)).toEqual({ detail: 'Authentication credentials were not provided.' });
    expect(render({ kind: 'shipment', shipment }, { authorization: 'Token nope' }).status).toBe(401);
    expect(adapter.parse(AWB, missing).outcome).toBe('error');
  });

  it('answers not_found, malformed, down and slow the carrier way', () => {
    expect(adapter.parse(AWB, render({ kind: 'not_found' }))).toEqual({ outcome: 'not_found' });
    const malformed = render({ kind: 'malformed' });
    expect(malformed.status).toBe(200);
    expect(adapter.parse(AWB, malformed).outcome).toBe('error');
    const down = render({ kind: 'down' });
    expect(down.status).toBe(503);
    expect(adapter.parse(AWB, down).outcome).toBe('error');
    const slow = render({ kind: 'slow', delayMs: 3000, shipment: shipmentOf([step('booked', 2)]) });
    expect(expectOk(adapter.parse(AWB, slow)).scans).toHaveLength(1);
  });
});
