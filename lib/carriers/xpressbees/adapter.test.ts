import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/xpressbees.ts';
import type { SandboxRequest, SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { makePoll } from '../../testutil/polls.ts';
import { answer } from '../../testutil/product.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { recordingSend } from '../../../test/support/carriers/recording-send.ts';
import { expectOk, normalizeAnswer, scanInstants } from '../../../test/support/carriers/round-trip.ts';
import { asNativeResponse } from '../../../test/support/carriers/sandbox-transport.ts';
import { eventAt, expectStepEvents, type StepEvent } from '../../../test/support/carriers/step-events.ts';
import { AHMEDABAD_TO_PUNE, FAILED_ATTEMPT_CASES, HOUR, shipmentBuilder, storyStep } from '../../../test/support/carriers/story.ts';
import type { HttpRequest, NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';
import { requireAwb } from '../../schemas/index.ts';

const AWB = requireAwb('141234567030204');
/** 2026-11-16 09:00 IST. */
const START = Date.UTC(2026, 10, 16, 3, 30);

const response = (body: string, status = 200): NativeResponse => ({ status, headers: { 'content-type': 'application/json' }, body });

// ---------------------------------------------------------------- hand-written native bodies

const REAL_BODY = JSON.stringify({
  status: true,
  data: {
    awb_number: AWB,
    status: 'delivered',
    origin: 'Ahmedabad, Gujarat, 380001',
    destination: 'Pune, Maharashtra, 411001',
    booking_date: '2026-11-16 09:05',
    expected_delivery_date: '2026-11-20',
    package_weight: '450',
    shipment_mode: 'Surface',
    history: [
      { status_code: 'DL', location: 'PNQ/KTJ, Pune, MAHARASHTRA', event_time: '2026-11-19 14:41', message: 'Delivered' },
      { status_code: 'OFD', location: 'PNQ/KTJ, Pune, MAHARASHTRA', event_time: '2026-11-19 08:12', message: 'Out for Delivery - Agent: Suresh Kumar, Mobile: 9876543210' },
      { status_code: 'UD', location: 'PNQ/KTJ, Pune, MAHARASHTRA', event_time: '2026-11-18 17:30', message: 'Undelivered - Consignee Unavailable' },
      { status_code: 'OFD', location: 'PNQ/KTJ, Pune, MAHARASHTRA', event_time: '2026-11-18 08:02', message: 'Out for Delivery (Delivery Boy: Ramesh, 9123456780)' },
      { status_code: 'RAD', location: 'PNQ/KTJ , Pune,  MAHARASHTRA ', event_time: '2026-11-18 05:40', message: 'Reached At Destination' },
      { status_code: 'IT', location: 'AMD/NRL, Ahmedabad, GUJARAT', event_time: '2026-11-16 22:15', message: 'In Transit' },
      { status_code: 'PKD', location: 'AMD/NRL, Ahmedabad, GUJARAT', event_time: '2026-11-16 15:00', message: 'Picked Up' },
      { status_code: 'DRC', location: 'AMD/NRL, Ahmedabad, GUJARAT', event_time: '2026-11-16 09:05', message: 'Data Received' },
    ],
  },
});

describe('xpressbees parser on native bodies', () => {
  it('reads "%Y-%m-%d %H:%M" IST times, codes, "A, B, C" locations and keeps the carrier order', () => {
    const scans = expectOk(adapter.parse(AWB, response(REAL_BODY))).scans;
    expect(scans.map((s) => s.occurred_at)).toEqual([
      '2026-11-19T14:41:00', '2026-11-19T08:12:00', '2026-11-18T17:30:00', '2026-11-18T08:02:00',
      '2026-11-18T05:40:00', '2026-11-16T22:15:00', '2026-11-16T15:00:00', '2026-11-16T09:05:00',
    ]);
    expect(scans[0]).toEqual({ occurred_at: '2026-11-19T14:41:00', raw_status: 'Delivered', raw_code: 'DL', remarks: null, location: 'PNQ/KTJ, Pune, MAHARASHTRA' });
    expect(scans[4]!.location).toBe('PNQ/KTJ, Pune, MAHARASHTRA');
  });

  it('moves the delivery agent named in the out-for-delivery message into remarks', () => {
    const scans = expectOk(adapter.parse(AWB, response(REAL_BODY))).scans;
    expect(scans[1]).toMatchObject({ raw_status: 'Out for Delivery', remarks: 'Agent: Suresh Kumar, Mobile: 9876543210' });
    expect(scans[3]).toMatchObject({ raw_status: 'Out for Delivery', remarks: 'Delivery Boy: Ramesh, 9123456780' });
    expect(scans[2]).toMatchObject({ raw_status: 'Undelivered', remarks: 'Consignee Unavailable' });
  });

  it('reads the header: places, booking date, a date-only EDD as the end of that day, grams, mode', () => {
    const parsed = adapter.parse(AWB, response(REAL_BODY));
    expect(parsed.outcome === 'ok' && parsed.shipment).toEqual({
      origin: { city: 'Ahmedabad', state: 'Gujarat', pincode: '380001' },
      destination: { city: 'Pune', state: 'Maharashtra', pincode: '411001' },
      service_type: 'surface',
      weight_grams: 450,
      booked_at: '2026-11-16T09:05:00',
      estimated_delivery_at: '2026-11-20T23:59:59',
    });
  });

  it('normalizes the native body into a delivered record with one failed attempt', () => {
    const parsed = adapter.parse(AWB, response(REAL_BODY));
    if (parsed.outcome !== 'ok') throw new Error('expected ok');
    const record = answer(makePoll({ carrier: 'xpressbees', awb: AWB, scans: parsed.scans, shipment: parsed.shipment }));
    expect(record.status).toBe('delivered');
    expect(record.delivered_at).toBe('2026-11-19T09:11:00.000Z');
    expect(record.delivery_attempts.attempts.map((a) => [a.outcome, a.reason_code])).toEqual([['failed', 'customer_unavailable'], ['delivered', null]]);
  });

  it('answers not_found for the carrier\'s "no data" answers and a 404', () => {
    expect(adapter.parse(AWB, response('{"status":false,"message":"No data found for the given AWB number"}'))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, response('{"status":false,"message":"Invalid AWB Number"}'))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, response('{"message":"Not Found"}', 404))).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['an empty 200', response('')],
    ['truncated JSON', response(REAL_BODY.slice(0, 300))],
    ['an HTML error page', response('<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>')],
    ['a 500', response('{"status":false,"message":"Internal error"}', 500)],
    ['an expired token', response('{"status":false,"message":"Token expired"}')],
    ['no history', response(`{"status":true,"data":{"awb_number":"${AWB}"}}`)],
    ['a scan without a message', response(`{"status":true,"data":{"history":[{"event_time":"2026-11-19 14:41","location":"Pune"}]}}`)],
    ['a day-first event_time', response(`{"status":true,"data":{"history":[{"event_time":"19-11-2026 14:41","message":"Delivered"}]}}`)],
    ['an impossible date', response(`{"status":true,"data":{"history":[{"event_time":"2026-02-30 14:41","message":"Delivered"}]}}`)],
    ['another AWB\'s answer', response('{"status":true,"data":{"awb_number":"999999999999","history":[]}}')],
  ])('answers error for %s', (_name, body) => {
    expect(adapter.parse(AWB, body).outcome).toBe('error');
  });

  it('survives 2000 mutations of a realistic body', () => {
    fuzzParser(adapter, AWB, response(REAL_BODY), 2000);
  });
});

// ---------------------------------------------------------------- request shape

describe('xpressbees fetch', () => {
  it('sends GET /api/shipments2/track/<awb> with the bearer token', async () => {
    const { sent, send } = recordingSend(() => response(REAL_BODY));
    const reply = await adapter.fetch(AWB, { baseUrl: 'http://127.0.0.1:4010/xpressbees', credentials: { token: 'tok-123' } }, send);
    expect(sent).toEqual([{
      method: 'GET',
      url: `http://127.0.0.1:4010/xpressbees/api/shipments2/track/${AWB}`,
      headers: { authorization: 'Bearer tok-123', accept: 'application/json' },
    }]);
    expect(reply.body).toBe(REAL_BODY);
  });
});

// ---------------------------------------------------------------- sandbox round trip

const step = (kind: StepKind, hour: number, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, START + hour * HOUR, location, extra);

const shipmentOf = shipmentBuilder({
  carrier: 'xpressbees', awb: AWB, scenario: 4, lane: 3, ...AHMEDABAD_TO_PUNE,
  bookedAt: START, edd: START + 96 * HOUR, weightGrams: 500, serviceType: 'surface',
});

const request = (awb: string, token: string | null): SandboxRequest => ({
  method: 'GET', path: `/api/shipments2/track/${awb}`, query: {}, headers: token === null ? {} : { authorization: `Bearer ${token}` }, body: '',
});

function render(shipment: SandboxShipment): NativeResponse {
  return asNativeResponse(renderer.routes[0]!.handle(request(AWB, 'sandbox'), { awb: AWB }, () => ({ kind: 'shipment', shipment })));
}

const roundTrip = (shipment: SandboxShipment) => normalizeAnswer(adapter, AWB, render(shipment), START + 200 * HOUR);

// Bags and holds are "In Transit" scans told apart by their detail (see the renderer).
const FORWARD: [SandboxStep, StepEvent][] = [
  [step('booked', 0, 'Ahmedabad'), { code: 'booked', reason: null }],
  [step('picked_up', 5, 'Ahmedabad'), { code: 'picked_up', reason: null }],
  [step('hub_in', 8, 'Ahmedabad'), { code: 'received', reason: null }],
  [step('bagged', 9, 'Ahmedabad'), { code: 'bagged', reason: null }],
  [step('hub_out', 10, 'Ahmedabad'), { code: 'dispatched', reason: null }],
  [step('hold', 16, 'Nagpur', { remark: 'Held due to heavy rain', ndr: 'other' }), { code: 'exception', reason: 'other' }],
  [step('hub_in', 30, 'Pune'), { code: 'received', reason: null }],
  [step('out_for_delivery', 33, 'Pune'), { code: 'out_for_delivery', reason: null }],
  [step('attempt_failed', 38, 'Pune', { ndr: 'customer_unavailable' }), { code: 'delivery_attempted', reason: 'customer_unavailable' }],
  [step('unmapped', 45, 'Pune'), { code: 'unknown', reason: null }],
  [step('out_for_delivery', 57, 'Pune'), { code: 'out_for_delivery', reason: null }],
  [step('delivered', 61, 'Pune', { remark: 'Delivered to Ramesh Kumar, 9876543210' }), { code: 'delivered', reason: null }],
];

describe('xpressbees sandbox round trip', () => {
  it('maps every forward step to its event code at the right UTC instant', () => {
    const shipment = shipmentOf(FORWARD.map(([s]) => s));
    const { record } = roundTrip(shipment);
    expectStepEvents(record, FORWARD);
    expect(record.status).toBe('delivered');
    expect(record.delivery_attempts.count).toBe(2);
    // The hold keeps the shipment moving: not an attempt, not an exception.
    expect(eventAt(record, FORWARD[5]![0]).status).toBe('in_transit');
  });

  it('keeps the newest-first order, the header and the EDD', () => {
    const shipment = shipmentOf(FORWARD.map(([s]) => s));
    const { parsed: { scans }, record } = roundTrip(shipment);
    const times = scanInstants(scans);
    expect(times).toEqual([...shipment.steps].reverse().map((s) => s.at));
    expect(record.origin?.pincode).toBe('380001');
    expect(record.destination?.pincode).toBe('411001');
    expect(record.estimated_delivery_at).toBe(new Date(shipment.edd!).toISOString());
    expect(record.shipment).toMatchObject({ service_type: 'surface', weight_grams: 500, booked_at: new Date(START).toISOString() });
  });

  it('writes "A, B, C" locations and names the agent in the out-for-delivery message', () => {
    const { scans } = roundTrip(shipmentOf(FORWARD.map(([s]) => s))).parsed;
    const ofd = scans.find((s) => s.raw_status === 'Out for Delivery')!;
    expect(ofd.location).toBe('PUN/HUB, Pune, Maharashtra');
    expect(ofd.remarks).toMatch(/^Agent: [A-Za-z ]+, Mobile: \d{10}$/);
  });

  it('keeps remarks with personal data in the native body and the parsed scan', () => {
    const shipment = shipmentOf(FORWARD.map(([s]) => s));
    expect(render(shipment).body).toContain('Delivered to Ramesh Kumar, 9876543210');
    expect(roundTrip(shipment).parsed.scans[0]!.remarks).toBe('Delivered to Ramesh Kumar, 9876543210');
  });

  it.each(FAILED_ATTEMPT_CASES)('a failed attempt for %s (remark %s) gives that NDR reason', (ndr, remark) => {
    const { record } = roundTrip(shipmentOf([
      step('picked_up', 0, 'Ahmedabad'), step('out_for_delivery', 30, 'Pune'), step('attempt_failed', 34, 'Pune', { ndr, remark }),
    ]));
    expect(record.status).toBe('exception');
    expect(record.insights.current_stage).toBe('delivery_attempted');
    expect(record.delivery_attempts.attempts[0]).toMatchObject({ outcome: 'failed', reason_code: ndr });
  });

  it('maps the return journey', () => {
    const steps = [
      step('picked_up', 0, 'Ahmedabad'), step('out_for_delivery', 30, 'Pune'),
      step('attempt_failed', 34, 'Pune', { ndr: 'refused' }), step('rto_initiated', 40, 'Pune'),
      step('rto_in_transit', 50, 'Nagpur'), step('rto_delivered', 70, 'Ahmedabad'),
    ];
    const inTransit = roundTrip(shipmentOf(steps.slice(0, 5))).record;
    expect([inTransit.status, inTransit.is_rto, inTransit.insights.current_stage]).toEqual(['returned', true, 'rto_in_transit']);
    expect(eventAt(inTransit, steps[3]!).code).toBe('rto_initiated');
    expect(eventAt(inTransit, steps[4]!).code).toBe('dispatched');
    const done = roundTrip(shipmentOf(steps)).record;
    expect(eventAt(done, steps[5]!).code).toBe('rto_delivered');
    expect([done.status, done.insights.current_stage]).toEqual(['returned', 'rto_delivered']);
  });

  it('maps a cancellation before pickup and a lost shipment', () => {
    const cancelled = [step('booked', 0, 'Ahmedabad'), step('cancelled', 20, 'Ahmedabad')];
    const c = roundTrip(shipmentOf(cancelled)).record;
    expect(eventAt(c, cancelled[1]!).code).toBe('exception');
    expect([c.status, c.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
    const lost = [step('picked_up', 0, 'Ahmedabad'), step('hub_in', 8, 'Nagpur'), step('lost', 90, 'Nagpur')];
    const l = roundTrip(shipmentOf(lost)).record;
    expect(eventAt(l, lost[2]!).code).toBe('exception');
    expect([l.status, l.insights.current_stage]).toEqual(['exception', 'exception']);
  });

  it('emits shuffled same-day scans exactly in the given order', () => {
    const given = [step('hub_out', 10, 'Ahmedabad'), step('picked_up', 5, 'Ahmedabad'), step('hub_in', 8, 'Ahmedabad'), step('booked', 0, 'Ahmedabad')];
    const { parsed: { scans }, record } = roundTrip(shipmentOf(given, { shuffled: true }));
    expect(scanInstants(scans)).toEqual(given.map((s) => s.at));
    expect(record.events.map((e) => e.code)).toEqual(['dispatched', 'received', 'picked_up', 'booked']);
  });

  it('answers the failure scenarios the carrier\'s way', () => {
    const route = renderer.routes[0]!;
    const reply = (kind: 'not_found' | 'down' | 'malformed') => adapter.parse(AWB, asNativeResponse(route.handle(request(AWB, 'sandbox'), { awb: AWB }, () => ({ kind }))));
    expect(reply('not_found')).toEqual({ outcome: 'not_found' });
    expect(reply('down')).toEqual({ outcome: 'error', error: 'HTTP 503' });
    expect(reply('malformed').outcome).toBe('error');
  });

  it('rejects a missing or wrong token with a 401, and serves the adapter\'s own request', async () => {
    const route = renderer.routes[0]!;
    const lookup = () => ({ kind: 'shipment', shipment: shipmentOf(FORWARD.map(([s]) => s)) }) as const;
    expect(route.handle(request(AWB, null), { awb: AWB }, lookup).status).toBe(401);
    expect(route.handle(request(AWB, 'wrong'), { awb: AWB }, lookup).status).toBe(401);
    const base = 'http://127.0.0.1:4010/xpressbees';
    const viaSandbox = async (req: HttpRequest): Promise<NativeResponse> => {
      const path = req.url.slice(base.length);
      expect([req.method, path.replace(AWB, ':awb')]).toEqual([route.method, route.path]);
      const r = route.handle({ method: req.method, path, query: {}, headers: req.headers ?? {}, body: req.body ?? '' }, { awb: AWB }, lookup);
      return { status: r.status, headers: {}, body: r.body };
    };
    const good = await adapter.fetch(AWB, { baseUrl: base, credentials: { token: 'sandbox' } }, viaSandbox);
    expect(adapter.parse(AWB, good).outcome).toBe('ok');
    const bad = await adapter.fetch(AWB, { baseUrl: base, credentials: { token: 'nope' } }, viaSandbox);
    expect(adapter.parse(AWB, bad)).toEqual({ outcome: 'error', error: 'credentials rejected (HTTP 401: Unauthorized access: invalid or missing token)' });
  });

  it('survives 2000 mutations of a sandbox body', () => {
    fuzzParser(adapter, AWB, render(shipmentOf(FORWARD.map(([s]) => s))), 2000, 7);
  });
});
