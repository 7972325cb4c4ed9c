import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/ekart.ts';
import type { ScenarioAnswer, SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { makePoll } from '../../testutil/polls.ts';
import { answer } from '../../testutil/product.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { recordingSend } from '../../../test/support/carriers/recording-send.ts';
import { expectOk, normalizeAnswer } from '../../../test/support/carriers/round-trip.ts';
import { asNativeResponse } from '../../../test/support/carriers/sandbox-transport.ts';
import { expectStepEvents, type StepEvent } from '../../../test/support/carriers/step-events.ts';
import { HOUR, MUMBAI_TO_KOLKATA, shipmentBuilder, storyStep } from '../../../test/support/carriers/story.ts';
import type { NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';
import { requireAwb } from '../../schemas/index.ts';

const AWB = requireAwb('FMPC0279658213');
const NOW = Date.UTC(2026, 10, 20, 6, 30); // 12:00 IST

function ok(body: string, status = 200): NativeResponse {
  return { status, headers: { 'content-type': 'application/json' }, body };
}

/** A hand-written answer in Ekart's shape: keyed by tracking id, history newest first. */
const REAL_BODY = JSON.stringify({
  [AWB]: {
    external_tracking_id: AWB,
    expected_delivery_date: '2026-11-19 20:00:00',
    source: { city: 'Bhiwandi', state: 'Maharashtra', pincode: '421302' },
    destination: { city: 'Kolkata', state: 'West Bengal', pincode: 700001 },
    shipment_weight: 1.2,
    history: [
      { status: 'shipment_delivered', public_description: 'Delivered to Ramesh Kumar, OTP 4821', hub_name: 'Kolkata_ParkStreet_DH', event_date: '2026-11-19 14:02:36', city: 'Kolkata' },
      { status: 'shipment_out_for_delivery', public_description: 'Out for delivery', hub_name: 'Kolkata_ParkStreet_DH', event_date: '2026-11-19 08:15:00', city: 'Kolkata' },
      { status: 'shipment_undelivered_attempted', public_description: 'Office/Institute closed', hub_name: 'Kolkata_ParkStreet_DH', event_date: '2026-11-18 18:40:00', city: 'Kolkata' },
      { status: 'shipment_out_for_delivery', public_description: 'Out for delivery', hub_name: 'Kolkata_ParkStreet_DH', event_date: '2026-11-18 09:00:00', city: 'Kolkata' },
      { status: 'shipment_received_at_hub', public_description: '', hub_name: 'Kolkata_Dankuni_MH', event_date: '2026-11-17 23:10:05', city: 'Kolkata' },
      { status: 'shipment_dispatched', public_description: null, hub_name: '', event_date: '2026-11-16 03:00:00', city: 'Bhiwandi' },
      { status: 'shipment_received_at_hub', public_description: 'Received', hub_name: 'Bhiwandi_MH', event_date: '2026-11-15T21:00:00', city: 'Bhiwandi' },
      { status: 'shipment_picked_up', public_description: 'Picked up', hub_name: 'Bhiwandi_FM', event_date: '2026-11-15 12:30:00', city: 'Bhiwandi' },
      { status: 'shipment_created', public_description: 'Shipment created', hub_name: null, event_date: '2026-11-14 19:45:12', city: 'Bhiwandi' },
    ],
  },
});

describe('ekart fetch', () => {
  it('POSTs the tracking ids as an idempotent read with bearer token and merchant code', async () => {
    const { sent, send } = recordingSend(() => ok('{}'));
    await adapter.fetch(AWB, { baseUrl: 'http://127.0.0.1:4010/ekart', credentials: { token: 'tok', merchant_code: 'MYN' } }, send);
    expect(sent).toHaveLength(1);
    const [request] = sent;
    expect(request).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:4010/ekart/v2/shipments/track', idempotent: true });
    expect(request!.headers).toMatchObject({ Authorization: 'Bearer tok', HTTP_X_MERCHANT_CODE: 'MYN', 'Content-Type': 'application/json' });
    expect(JSON.parse(request!.body!)).toEqual({ tracking_ids: [AWB] });
  });
});

describe('ekart parse', () => {
  it('reads the entry for the id, keeping the newest-first order', () => {
    const parsed = expectOk(adapter.parse(AWB, ok(REAL_BODY)));
    expect(parsed.shipment).toEqual({
      origin: { city: 'Bhiwandi', state: 'Maharashtra', pincode: '421302' },
      destination: { city: 'Kolkata', state: 'West Bengal', pincode: '700001' },
      service_type: null,
      weight_grams: 1200,
      booked_at: null,
      estimated_delivery_at: '2026-11-19T20:00:00',
    });
    expect(parsed.scans.map((s) => s.raw_status)).toEqual([
      'shipment_delivered', 'shipment_out_for_delivery', 'shipment_undelivered_attempted', 'shipment_out_for_delivery',
      'shipment_received_at_hub', 'shipment_dispatched', 'shipment_received_at_hub', 'shipment_picked_up', 'shipment_created',
    ]);
    expect(parsed.scans[0]).toEqual({
      occurred_at: '2026-11-19T14:02:36', raw_status: 'shipment_delivered', raw_code: null,
      remarks: 'Delivered to Ramesh Kumar, OTP 4821', location: 'Kolkata_ParkStreet_DH',
    });
  });

  it('falls back to the city without a hub name and reads empty descriptions as no remark', () => {
    const parsed = expectOk(adapter.parse(AWB, ok(REAL_BODY)));
    expect(parsed.scans[5]).toMatchObject({ location: 'Bhiwandi', remarks: null, occurred_at: '2026-11-16T03:00:00' });
    expect(parsed.scans[4]!.remarks).toBeNull();
    expect(parsed.scans[6]!.occurred_at).toBe('2026-11-15T21:00:00');
  });

  it('finds the entry by external_tracking_id and in lower case', () => {
    const body = REAL_BODY.replace(`"${AWB}":`, '"request-1":');
    expect(expectOk(adapter.parse(AWB, ok(body))).scans).toHaveLength(9);
    expect(expectOk(adapter.parse(requireAwb(AWB.toLowerCase()), ok(REAL_BODY))).scans).toHaveLength(9);
  });

  it('maps the hand-written journey through the product rules', () => {
    const parsed = expectOk(adapter.parse(AWB, ok(REAL_BODY)));
    const record = answer(makePoll({ carrier: 'ekart', awb: AWB, polled_at: '2026-11-20T06:30:00.000Z', shipment: parsed.shipment, scans: parsed.scans }));
    expect(record.status).toBe('delivered');
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual(['premises_closed', null]);
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('answers not_found for the per-id "no data" entry and an empty history', () => {
    expect(adapter.parse(AWB, ok(JSON.stringify({ [AWB]: { message: [`No shipment found for tracking id ${AWB}`] } })))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, ok(JSON.stringify({ [AWB]: { external_tracking_id: AWB, history: [] } })))).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['truncated JSON', ok(REAL_BODY.slice(0, 400))],
    ['an HTML error page', ok('<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>')],
    ['an empty 200', ok('')],
    ['a 503', ok('Service Unavailable', 503)],
    ['an expired token', ok('{"unauthorised":"Invalid or expired token"}', 401)],
    ['an answer for another id', ok(REAL_BODY.replaceAll(AWB, 'FMPC0000000001'))],
    ['an event without event_date', ok(REAL_BODY.replace('"event_date":"2026-11-19 08:15:00",', ''))],
    ['an impossible event_date', ok(REAL_BODY.replace('2026-11-19 08:15:00', '2026-11-31 08:15:00'))],
    ['an entry without history', ok(JSON.stringify({ [AWB]: { external_tracking_id: AWB } }))],
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
  carrier: 'ekart', awb: AWB, scenario: 2, lane: 1, ...MUMBAI_TO_KOLKATA, edd: NOW + 30 * HOUR, weightGrams: 1250, serviceType: 'surface',
});

const route = renderer.routes[0]!;
const SANDBOX_HEADERS = { authorization: 'Bearer sandbox', http_x_merchant_code: 'sandbox', 'content-type': 'application/json' };

function render(scenario: ScenarioAnswer, headers: Record<string, string> = SANDBOX_HEADERS, body = JSON.stringify({ tracking_ids: [AWB] })): NativeResponse {
  return asNativeResponse(route.handle({ method: 'POST', path: '/v2/shipments/track', query: {}, headers, body }, {}, () => scenario));
}

const roundTrip = (shipment: SandboxShipment) => normalizeAnswer(adapter, AWB, render({ kind: 'shipment', shipment }), NOW);

/** Every step kind, each an hour apart, with what the ekart rules make of it. */
const EVERY_KIND: [SandboxStep, StepEvent][] = [
  [step('booked', 40), { code: 'booked', status: 'awaiting_pickup' }],
  [step('picked_up', 39), { code: 'picked_up', status: 'picked_up' }],
  [step('hub_in', 38), { code: 'received' }],
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

describe('ekart round trip through the sandbox renderer', () => {
  it('maps every step kind to the expected event at the right instant', () => {
    const { record } = roundTrip(shipmentOf(EVERY_KIND.map(([s]) => s)));
    expect(record.events).toHaveLength(EVERY_KIND.length);
    expectStepEvents(record, EVERY_KIND);
  });

  it('writes the real web-tracking shape: cities, epoch-millisecond dates, details oldest first', () => {
    const steps = [step('booked', 50), step('picked_up', 40), step('hub_in', 30), step('out_for_delivery', 4)];
    const { parsed, record, response } = roundTrip(shipmentOf(steps));
    expect(Object.keys(JSON.parse(response.body) as object)).toEqual([AWB]);
    expect(parsed.shipment).toEqual({
      origin: { city: 'MUMBAI', state: null, pincode: '400001' },
      destination: { city: 'KOLKATA', state: null, pincode: '700001' },
      service_type: null, weight_grams: null, booked_at: null,
      estimated_delivery_at: new Date(NOW + 30 * HOUR).toISOString(),
    });
    expect(parsed.scans.map((s) => s.raw_status)).toEqual(['Shipment Created', 'Pickup From Seller', 'Received At Facility', 'Out For Delivery']);
    expect(parsed.scans[3]!.occurred_at).toBe(new Date(NOW - 4 * HOUR).toISOString());
    expect(record.status).toBe('out_for_delivery');
    expect(record.estimated_delivery_at).toBe(new Date(NOW + 30 * HOUR).toISOString());
    expect(record.destination?.pincode).toBe('700001');
  });

  it('emits shuffled steps exactly in the given order', () => {
    const steps = [step('hub_in', 5), step('booked', 9), step('hub_out', 4), step('picked_up', 8)];
    const { parsed, record } = roundTrip(shipmentOf(steps, { shuffled: true }));
    expect(parsed.scans.map((s) => s.raw_status)).toEqual(['Received At Facility', 'Shipment Created', 'Dispatched From Facility', 'Pickup From Seller']);
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
  });

  it('puts remarks with personal data into the native body', () => {
    const remark = 'Call Suresh on +91 98765 43210, OTP 4821';
    const response = render({ kind: 'shipment', shipment: shipmentOf([step('booked', 9), step('out_for_delivery', 2, { remark })]) });
    expect(response.body).toContain(remark);
    expect(expectOk(adapter.parse(AWB, response)).scans[1]!.remarks).toBe(remark);
  });
});

describe('ekart sandbox failure answers', () => {
  const shipment = shipmentOf([step('booked', 2)]);

  it('rejects a missing token with 401 and a wrong merchant code with 403', () => {
    const missing = render({ kind: 'shipment', shipment }, {});
    expect(missing.status).toBe(401);
    expect(adapter.parse(AWB, missing).outcome).toBe('error');
    expect(render({ kind: 'shipment', shipment }, { ...SANDBOX_HEADERS, http_x_merchant_code: 'other' }).status).toBe(403);
  });

  it('rejects a body without tracking ids', () => {
    expect(render({ kind: 'shipment', shipment }, SANDBOX_HEADERS, '{"ids":[]}').status).toBe(400);
  });

  it('answers several ids in one call', () => {
    const reply = route.handle(
      { method: 'POST', path: '/v2/shipments/track', query: {}, headers: SANDBOX_HEADERS, body: JSON.stringify({ tracking_ids: [AWB, 'FMPC0000000000'] }) },
      {},
      (id) => (id === AWB ? { kind: 'shipment', shipment } : { kind: 'not_found' }),
    );
    const response = { status: reply.status, headers: {}, body: reply.body };
    expect(expectOk(adapter.parse(AWB, response)).scans).toHaveLength(1);
    expect(adapter.parse(requireAwb('FMPC0000000000'), response)).toEqual({ outcome: 'not_found' });
  });

  it('answers not_found, malformed, down and slow the carrier way', () => {
    expect(adapter.parse(AWB, render({ kind: 'not_found' }))).toEqual({ outcome: 'not_found' });
    const malformed = render({ kind: 'malformed' });
    expect(malformed.status).toBe(200);
    expect(adapter.parse(AWB, malformed).outcome).toBe('error');
    const down = render({ kind: 'down' });
    expect(down.status).toBe(503);
    expect(adapter.parse(AWB, down).outcome).toBe('error');
    expect(expectOk(adapter.parse(AWB, render({ kind: 'slow', delayMs: 3000, shipment }))).scans).toHaveLength(1);
  });
});
