import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/professionalcouriers.ts';
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

const AWB = requireAwb('ITMI1505876');
const NOW = Date.UTC(2026, 10, 20, 6, 30); // 12:00 IST

function ok(body: string, status = 200): NativeResponse {
  return { status, headers: { 'content-type': 'text/plain' }, body };
}

/** A hand-written answer as the branch handler writes it: CRLF, newest first, one block per scan. */
const REAL_TEXT = [
  'Forwarding Details :',
  '',
  '19/11/2026    Time : 14:02:36',
  'City : Tiruvannamalai   WayNo : ITMI1505876',
  'Activity : delivered: Delivered - Area',
  'Pieces : 1   Weight : 0.1',
  '',
  '19/11/2026    Time : 09:10:00',
  'City : Tiruvannamalai   WayNo : ITMI1505876',
  'Activity : outfordelivery: Out for Delivery - Area',
  'Pieces : 1   Weight : 0.1',
  '',
  '18/11/2026    Time : 17:45:00',
  'City : Tiruvannamalai   WayNo : ITMI1505876',
  'Activity : Address Improper - Area',
  'Pieces : 1   Weight : 0.1',
  '',
  '18/11/2026    Time : 08:30:00',
  'City : Tiruvannamalai   WayNo : ITMI1505876',
  'Activity : Received at Tiruvannamalai',
  'Pieces : 1   Weight : 0.1',
  '',
  '17/11/2026    Time : 22:05:00',
  'City : Chennai   WayNo : ITMI1505876',
  'Activity : Despatched to Tiruvannamalai - MTP',
  'Pieces : 1   Weight : 0.1',
  '',
  '17/11/2026    Time : 19:00:00',
  'City : Chennai   WayNo : ITMI1505876',
  'Activity : Received at Chennai Hub',
  'Pieces : 1   Weight : 0.1',
  '',
  '16/11/2026    Time : 20:15:00',
  'City : Pondicherry   WayNo : ITMI1505876',
  'Activity : Bag Despatched to Chennai Hub',
  'Pieces : 1   Weight : 0.1',
  '',
  '16/11/2026    Time : 11:20:00',
  'City : Pondicherry   WayNo : ITMI1505876',
  'Activity : Booked at Pondicherry',
  'Pieces : 1   Weight : 0.1',
  '',
].join('\r\n');

describe('professionalcouriers fetch', () => {
  it('GETs the mobile handler with the number as podno and no credentials', async () => {
    const { sent, send } = recordingSend(() => ok('Forwarding Details :'));
    await adapter.fetch(AWB, { baseUrl: 'http://127.0.0.1:4010/professionalcouriers', credentials: {} }, send);
    expect(sent).toEqual([{
      method: 'GET',
      url: `http://127.0.0.1:4010/professionalcouriers/TrackMobDe.ashx?podno=${AWB}`,
      headers: { Accept: 'text/plain' },
    }]);
  });
});

describe('professionalcouriers parse', () => {
  it('reads each block into a scan, newest first as listed', () => {
    const parsed = expectOk(adapter.parse(AWB, ok(REAL_TEXT)));
    expect(parsed.scans.map((s) => s.raw_status)).toEqual([
      'delivered: Delivered - Area', 'outfordelivery: Out for Delivery - Area', 'Address Improper - Area', 'Received at Tiruvannamalai',
      'Despatched to Tiruvannamalai - MTP', 'Received at Chennai Hub', 'Bag Despatched to Chennai Hub', 'Booked at Pondicherry',
    ]);
    expect(parsed.scans[0]).toEqual({
      occurred_at: '2026-11-19T14:02:36', raw_status: 'delivered: Delivered - Area', raw_code: null, remarks: null, location: 'Tiruvannamalai',
    });
    expect(parsed.shipment).toEqual({
      origin: null, destination: null, service_type: null, weight_grams: 100, booked_at: null, estimated_delivery_at: null,
    });
  });

  it('maps the branch texts through the product rules', () => {
    const parsed = expectOk(adapter.parse(AWB, ok(REAL_TEXT)));
    const record = answer(makePoll({ carrier: 'professionalcouriers', awb: AWB, polled_at: '2026-11-20T06:30:00.000Z', shipment: parsed.shipment, scans: parsed.scans }));
    expect(record.status).toBe('delivered');
    expect([...record.events].reverse().map((e) => e.code)).toEqual([
      'booked', 'bagged', 'received', 'dispatched', 'received', 'delivery_attempted', 'out_for_delivery', 'delivered',
    ]);
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual(['address_issue', null]);
  });

  it('tolerates LF-only lines, extra spaces, missing City / Pieces lines and seconds', () => {
    const text = [
      'Forwarding Details:',
      '  20/11/2026 Time:09:05',
      'Activity :    outfordelivery: Out for Delivery - Area   ',
      '',
      '19/11/2026      Time  :  18:00:00',
      'City   :   New   Delhi WayNo :ITMI1505876',
      'Activity : Received at New Delhi Hub',
      'Pieces : 2    Weight :  1.25',
    ].join('\n');
    const parsed = expectOk(adapter.parse(AWB, ok(text)));
    expect(parsed.scans).toEqual([
      { occurred_at: '2026-11-20T09:05:00', raw_status: 'outfordelivery: Out for Delivery - Area', raw_code: null, remarks: null, location: null },
      { occurred_at: '2026-11-19T18:00:00', raw_status: 'Received at New Delhi Hub', raw_code: null, remarks: null, location: 'New   Delhi' },
    ]);
    expect(parsed.shipment?.weight_grams).toBe(1250);
  });

  it('answers not_found for the bare "Forwarding Details :" header', () => {
    expect(adapter.parse(AWB, ok('Forwarding Details :\r\n'))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, ok('Forwarding Details :\r\n\r\n\r\n'))).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['text cut in a date line', ok(`${REAL_TEXT.slice(0, REAL_TEXT.indexOf('Time : 09:10'))}Ti`)],
    ['a block cut before its Activity', ok(REAL_TEXT.slice(0, REAL_TEXT.indexOf('Activity : outfordelivery')))],
    ['an HTML error page', ok('<html><head><title>Runtime Error</title></head><body>Server Error in \'/\' Application.</body></html>')],
    ['an empty 200', ok('')],
    ['a 503', ok('Service Unavailable', 503)],
    ['text that is not a tracking answer', ok('Service Unavailable')],
    ['an impossible date', ok(REAL_TEXT.replace('18/11/2026    Time : 17:45:00', '31/11/2026    Time : 17:45:00'))],
  ])('answers error for %s', (_name, response) => {
    expect(adapter.parse(AWB, response).outcome).toBe('error');
  });

  it('survives 2000 mutations of a realistic body', () => {
    fuzzParser(adapter, AWB, ok(REAL_TEXT), 2000);
  });
});

// ---------------------------------------------------------------------------------------------
// Round trip: sandbox renderer → adapter → normalization.

const step = (kind: StepKind, hoursAgo: number, extra: Partial<SandboxStep> = {}) => storyStep(kind, NOW - hoursAgo * HOUR, `Branch ${hoursAgo}`, extra);

const shipmentOf = shipmentBuilder({
  carrier: 'professionalcouriers', awb: AWB, scenario: 2, lane: 2,
  origin: { city: 'Chennai', state: 'Tamil Nadu', pincode: '600001' },
  destination: { city: 'Hyderabad', state: 'Telangana', pincode: '500001' },
  edd: null, weightGrams: 250, serviceType: 'express',
});

const route = renderer.routes[0]!;

function render(scenario: ScenarioAnswer, query: Record<string, string> = { podno: AWB }): NativeResponse {
  return asNativeResponse(route.handle({ method: 'GET', path: '/TrackMobDe.ashx', query, headers: {}, body: '' }, {}, () => scenario));
}

const roundTrip = (shipment: SandboxShipment) => normalizeAnswer(adapter, AWB, render({ kind: 'shipment', shipment }), NOW);

/** Every step kind, each an hour apart, with what the branch rules make of it. */
const EVERY_KIND: [SandboxStep, StepEvent][] = [
  [step('booked', 40), { code: 'booked' }],
  // Branch booking / pickup texts both map to booked.
  [step('picked_up', 39), { code: 'booked', status: 'picked_up' }],
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
  // "RTO - Despatched to …" matches the '^rto' rule: a return-leg scan, coded rto_initiated.
  [step('rto_in_transit', 22), { code: 'dispatched', status: 'returned' }],
  [step('rto_delivered', 21), { code: 'rto_delivered', status: 'returned' }],
];

describe('professionalcouriers round trip through the sandbox renderer', () => {
  it('maps every step kind to the expected event at the right instant', () => {
    const { record } = roundTrip(shipmentOf(EVERY_KIND.map(([s]) => s)));
    expect(record.events).toHaveLength(EVERY_KIND.length);
    expectStepEvents(record, EVERY_KIND);
  });

  it('writes CRLF blocks newest first with the weight, and despatches name the next place', () => {
    const steps = [step('booked', 50, { location: 'Chennai' }), step('hub_out', 45, { location: 'Chennai' }),
      step('hub_in', 30, { location: 'Vijayawada Hub' }), step('out_for_delivery', 4, { location: 'Hyderabad' })];
    const response = render({ kind: 'shipment', shipment: shipmentOf(steps) });
    expect(response.body.startsWith('Forwarding Details :\r\n\r\n20/11/2026    Time : 08:00:00\r\nCity : Hyderabad   WayNo : ITMI1505876\r\n')).toBe(true);
    expect(response.body).not.toMatch(/[^\r]\n/);
    const { parsed, record } = roundTrip(shipmentOf(steps));
    expect(parsed.scans.map((s) => s.raw_status)).toEqual([
      'outfordelivery: Out for Delivery - Area', 'Received at Vijayawada Hub', 'Despatched to Vijayawada Hub', 'Booked at Chennai',
    ]);
    expect(parsed.scans[0]!.occurred_at).toBe('2026-11-20T08:00:00');
    expect(parsed.shipment?.weight_grams).toBe(250);
    expect(record.status).toBe('out_for_delivery');
    expect(record.shipment.weight_grams).toBe(250);
  });

  it('emits shuffled steps exactly in the given order', () => {
    const steps = [step('hub_in', 5), step('booked', 9), step('hub_out', 4), step('bagged', 8)];
    const { parsed, record } = roundTrip(shipmentOf(steps, { shuffled: true }));
    expect(parsed.scans.map((s) => s.occurred_at)).toEqual(steps.map((s) => new Date(s.at + 5.5 * HOUR).toISOString().slice(0, 19)));
    expect(record.events.map((e) => e.code)).toEqual(['dispatched', 'received', 'bagged', 'booked']);
  });

  it('tells the terminal stories apart', () => {
    const delivered = roundTrip(shipmentOf([step('booked', 60), step('hub_in', 50), step('out_for_delivery', 30),
      step('attempt_failed', 26, { ndr: 'address_issue' }), step('out_for_delivery', 6), step('delivered', 3)])).record;
    expect(delivered.status).toBe('delivered');
    expect(delivered.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual(['address_issue', null]);

    const returned = roundTrip(shipmentOf([step('booked', 60), step('hub_in', 50), step('attempt_failed', 40, { ndr: 'refused' }),
      step('rto_initiated', 30), step('rto_in_transit', 20), step('rto_delivered', 2)])).record;
    expect(returned.status).toBe('returned');
    expect(returned.is_rto).toBe(true);
    expect(returned.milestones.rto_delivered_at).toBe(new Date(NOW - 2 * HOUR).toISOString());

    const cancelled = roundTrip(shipmentOf([step('booked', 30), step('cancelled', 10)])).record;
    expect(cancelled.status).toBe('cancelled');

    const lost = roundTrip(shipmentOf([step('booked', 60), step('hub_in', 50), step('lost', 5)])).record;
    expect(lost.status).toBe('exception');
  });

  it('puts remarks with personal data into the Activity text', () => {
    const remark = 'Consignee Ramesh not available, call 9876543210';
    const response = render({ kind: 'shipment', shipment: shipmentOf([step('booked', 9), step('attempt_failed', 2, { remark, ndr: 'customer_unavailable' })]) });
    expect(response.body).toContain(remark);
    const parsed = expectOk(adapter.parse(AWB, response));
    expect(parsed.scans[0]!.raw_status).toBe(`Undelivered - ${remark} - Area`);
  });
});

describe('professionalcouriers sandbox failure answers', () => {
  it('answers not_found with the bare header, malformed, down and slow the carrier way', () => {
    const notFound = render({ kind: 'not_found' });
    expect(notFound.body).toBe('Forwarding Details :\r\n');
    expect(adapter.parse(AWB, notFound)).toEqual({ outcome: 'not_found' });
    const malformed = render({ kind: 'malformed' });
    expect(malformed.status).toBe(200);
    expect(adapter.parse(AWB, malformed).outcome).toBe('error');
    const down = render({ kind: 'down' });
    expect(down.status).toBe(503);
    expect(adapter.parse(AWB, down).outcome).toBe('error');
    expect(expectOk(adapter.parse(AWB, render({ kind: 'slow', delayMs: 3000, shipment: shipmentOf([step('booked', 2)]) }))).scans).toHaveLength(1);
  });

  it('rejects a request without podno', () => {
    expect(render({ kind: 'not_found' }, {}).status).toBe(400);
  });
});
