import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/speedpost.ts';
import type { SandboxRequest, SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { requireAwb, type NdrReason } from '../../schemas/index.ts';
import { makePoll } from '../../testutil/polls.ts';
import { answer } from '../../testutil/product.ts';
import { createPostalAdapter } from '../indiapost/postal.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { recordingSend } from '../../../test/support/carriers/recording-send.ts';
import { expectOk, normalizeAnswer, scanInstants } from '../../../test/support/carriers/round-trip.ts';
import { asNativeResponse } from '../../../test/support/carriers/sandbox-transport.ts';
import { eventAt, expectStepEvents, type StepEvent } from '../../../test/support/carriers/step-events.ts';
import { HOUR, MUMBAI_TO_KOLKATA, shipmentBuilder, storyStep } from '../../../test/support/carriers/story.ts';
import type { NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';

const AWB = requireAwb('EE123451004IN');
/** 2026-11-16 09:00 IST. */
const START = Date.UTC(2026, 10, 16, 3, 30);
const BASE_URL = 'http://127.0.0.1:4010/speedpost';

const response = (body: string, status = 200): NativeResponse => ({ status, headers: { 'content-type': 'application/json' }, body });

// ---------------------------------------------------------------- hand-written native bodies

const detail = (date: string, time: string, office: string, event: string) => ({ date: `${date}T00:00:00Z`, time, office, event });

const bodyOf = (events: ReturnType<typeof detail>[], booking: Record<string, unknown> = {}) => JSON.stringify({
  status_code: 200,
  success: true,
  message: 'Success',
  data: [{
    booking_details: {
      article_number: AWB,
      article_type: 'Speed Post',
      booked_at: 'Dhule Jaihind Colony S.O',
      booked_on: '2026-11-16T00:00:00Z',
      booking_time: '11:20:05',
      origin_pincode: '424002',
      destination_pincode: '400001',
      delivery_location: 'Mumbai G.P.O.',
      weight: 250,
      ...booking,
    },
    tracking_details: events,
  }],
});

// Speed Post's feed glues labels to their detail and writes failed attempts as labels of their own.
const GLUED_BODY = bodyOf([
  detail('2026-11-18', '17:45:00', 'Mumbai G.P.O.', 'Item Delivered'),
  detail('2026-11-18', '09:02:10', 'Mumbai G.P.O.', 'Out for Delivery'),
  detail('2026-11-17', '15:10:42', 'Mumbai G.P.O.', 'Addressee Absent'),
  detail('2026-11-17', '08:55:00', 'Mumbai G.P.O.', 'Out for Delivery'),
  detail('2026-11-17', '04:20:13', 'Mumbai NSH', 'Item ReceivedItem Received At Mumbai NSH'),
  detail('2026-11-16', '23:05:51', 'Dhule H.O', 'Item DispatchItem Dispatched To Mumbai NSH'),
  detail('2026-11-16', '18:31:52', 'Dhule H.O', 'Item BagItem Bagged For Mumbai NSH'),
  detail('2026-11-16', '11:20:05', 'Dhule Jaihind Colony S.O', 'Item BookItem Book At Dhule Jaihind Colony S.O'),
]);

const RETURN_BODY = bodyOf([
  detail('2026-11-22', '12:00:00', 'Dhule Jaihind Colony S.O', 'Item Returned to Sender'),
  detail('2026-11-20', '10:00:00', 'Mumbai G.P.O.', 'Item Returned - Refused'),
  detail('2026-11-19', '15:00:00', 'Mumbai G.P.O.', 'Item Not Delivered - Addressee Refused'),
  detail('2026-11-19', '09:00:00', 'Mumbai G.P.O.', 'Out for Delivery'),
  detail('2026-11-16', '11:20:05', 'Dhule Jaihind Colony S.O', 'Item Booked '),
]);

describe('speedpost parser on native bodies', () => {
  it('splits glued labels into the label (raw_status) and the detail (remarks)', () => {
    const scans = expectOk(adapter.parse(AWB, response(GLUED_BODY))).scans;
    expect(scans[7]).toEqual({
      occurred_at: '2026-11-16T11:20:05', raw_status: 'Item Book', raw_code: null,
      remarks: 'Item Book At Dhule Jaihind Colony S.O', location: 'Dhule Jaihind Colony S.O',
    });
    expect(scans.slice(4, 7).map((s) => [s.raw_status, s.remarks])).toEqual([
      ['Item Received', 'Item Received At Mumbai NSH'],
      ['Item Dispatch', 'Item Dispatched To Mumbai NSH'],
      ['Item Bag', 'Item Bagged For Mumbai NSH'],
    ]);
  });

  it('combines the date dressed as UTC midnight with the IST time, keeping the carrier order', () => {
    expect(expectOk(adapter.parse(AWB, response(GLUED_BODY))).scans.map((s) => s.occurred_at)).toEqual([
      '2026-11-18T17:45:00', '2026-11-18T09:02:10', '2026-11-17T15:10:42', '2026-11-17T08:55:00',
      '2026-11-17T04:20:13', '2026-11-16T23:05:51', '2026-11-16T18:31:52', '2026-11-16T11:20:05',
    ]);
  });

  it('reads the booking details of a Speed Post article (numeric weight, no EDD)', () => {
    const parsed = adapter.parse(AWB, response(GLUED_BODY));
    expect(parsed.outcome === 'ok' && parsed.shipment).toEqual({
      origin: { office: 'Dhule Jaihind Colony S.O', city: null, state: null, pincode: '424002' },
      destination: { office: 'Mumbai G.P.O.', city: null, state: null, pincode: '400001' },
      service_type: 'speed_post',
      weight_grams: 250,
      booked_at: '2026-11-16T11:20:05',
      estimated_delivery_at: null,
    });
  });

  it('normalizes glued labels and "Addressee Absent" into the right codes', () => {
    const parsed = adapter.parse(AWB, response(GLUED_BODY));
    if (parsed.outcome !== 'ok') throw new Error('expected ok');
    const record = answer(makePoll({ carrier: 'speedpost', awb: AWB, scans: parsed.scans, shipment: parsed.shipment }));
    expect(record.events.map((e) => e.code)).toEqual([
      'delivered', 'out_for_delivery', 'delivery_attempted', 'out_for_delivery', 'received', 'dispatched', 'bagged', 'booked',
    ]);
    expect(record.delivery_attempts.attempts[0]).toMatchObject({ outcome: 'failed', reason_code: 'customer_unavailable' });
    expect(record.insights.hub_count).toBe(2);
  });

  it('normalizes a return: "Item Returned" starts it, "Item Returned to Sender" ends it', () => {
    const parsed = adapter.parse(AWB, response(RETURN_BODY));
    if (parsed.outcome !== 'ok') throw new Error('expected ok');
    const record = answer(makePoll({ carrier: 'speedpost', awb: AWB, scans: parsed.scans, shipment: parsed.shipment }));
    expect(record.events.map((e) => e.code)).toEqual(['rto_delivered', 'rto_initiated', 'delivery_attempted', 'out_for_delivery', 'booked']);
    expect(record.delivery_attempts.attempts[0]).toMatchObject({ reason_code: 'refused' });
    expect([record.status, record.insights.current_stage]).toEqual(['returned', 'rto_delivered']);
  });

  it('answers not_found for a 404 and an empty data list', () => {
    expect(adapter.parse(AWB, response('{"status_code":404,"success":false,"message":"No record found for the given article number"}', 404))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, response('{"status_code":200,"success":true,"message":"Success","data":[]}'))).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['an empty 200', response('')],
    ['truncated JSON', response(GLUED_BODY.slice(0, GLUED_BODY.length - 40))],
    ['an HTML error page', response('<!DOCTYPE html><html><body><h1>Service Temporarily Unavailable</h1></body></html>')],
    ['a 503', response('Service Unavailable', 503)],
    ['a bare array', response('[]')],
    ['an event with an empty text', response(bodyOf([detail('2026-11-18', '17:45:00', 'Mumbai', '   ')]))],
    ['a day-first date', response(bodyOf([{ date: '18-11-2026', time: '17:45:00', office: 'Mumbai', event: 'Item Delivered' }]))],
  ])('answers error for %s', (_name, body) => {
    expect(adapter.parse(AWB, body).outcome).toBe('error');
  });

  it('survives 2000 mutations of a realistic body', () => {
    fuzzParser(adapter, AWB, response(GLUED_BODY), 2000);
  });
});

// ---------------------------------------------------------------- request shape and login

describe('speedpost fetch', () => {
  it('logs in, then GETs /v1/tracking/<article> with the token; the token is reused', async () => {
    const { sent, send } = recordingSend((request) => (request.method === 'POST'
      ? response('{"success":true,"data":{"access_token":"sp-tok","expires_in":900}}')
      : response(GLUED_BODY)));
    const postal = createPostalAdapter('speedpost');
    const credentials = { username: 'sp-user', password: 'sp-pass' };
    await postal.fetch(AWB, { baseUrl: BASE_URL, credentials }, send);
    await postal.fetch(requireAwb('EE000000001IN'), { baseUrl: BASE_URL, credentials }, send);
    expect(sent.map((r) => [r.method, r.url, r.headers?.authorization ?? r.body])).toEqual([
      ['POST', `${BASE_URL}/v1/access/login`, '{"username":"sp-user","password":"sp-pass"}'],
      ['GET', `${BASE_URL}/v1/tracking/${AWB}`, 'Bearer sp-tok'],
      ['GET', `${BASE_URL}/v1/tracking/EE000000001IN`, 'Bearer sp-tok'],
    ]);
    expect(sent[0]!.idempotent).toBe(true);
  });

  it('keeps separate tokens per base URL', async () => {
    const { sent, send } = recordingSend((request) => (request.method === 'POST'
      ? response(`{"success":true,"data":{"access_token":"tok-${sent.length}"}}`)
      : response(GLUED_BODY)));
    const logins = () => sent.filter((r) => r.method === 'POST').map((r) => r.url);
    const postal = createPostalAdapter('speedpost');
    const credentials = { username: 'u', password: 'p' };
    await postal.fetch(AWB, { baseUrl: BASE_URL, credentials }, send);
    await postal.fetch(AWB, { baseUrl: 'https://api.example.in', credentials }, send);
    await postal.fetch(AWB, { baseUrl: BASE_URL, credentials }, send);
    expect(logins()).toEqual([`${BASE_URL}/v1/access/login`, 'https://api.example.in/v1/access/login']);
  });
});

// ---------------------------------------------------------------- sandbox round trip

const step = (kind: StepKind, hour: number, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, START + hour * HOUR, location, extra);

const shipmentOf = shipmentBuilder({
  carrier: 'speedpost', awb: AWB, scenario: 4, lane: 10, ...MUMBAI_TO_KOLKATA,
  bookedAt: START, edd: START + 72 * HOUR, weightGrams: 250, serviceType: 'speed_post',
});

const trackingRoute = renderer.routes.find((r) => r.method === 'GET')!;
const loginRoute = renderer.routes.find((r) => r.method === 'POST')!;

const SANDBOX_TOKEN = (JSON.parse(loginRoute.handle(
  { method: 'POST', path: '/v1/access/login', query: {}, headers: {}, body: '{"username":"sandbox","password":"sandbox"}' }, {}, () => ({ kind: 'not_found' }),
).body) as { data: { access_token: string } }).data.access_token;

const trackingRequest = (token: string | null): SandboxRequest => ({
  method: 'GET', path: `/v1/tracking/${AWB}`, query: {}, headers: token === null ? {} : { Authorization: `Bearer ${token}` }, body: '',
});

function render(shipment: SandboxShipment): NativeResponse {
  return asNativeResponse(trackingRoute.handle(trackingRequest(SANDBOX_TOKEN), { article: AWB }, () => ({ kind: 'shipment', shipment })));
}

const roundTrip = (shipment: SandboxShipment) => normalizeAnswer(adapter, AWB, render(shipment), START + 200 * HOUR);

// A hold is an "Item Received" scan whose detail tells of the delay.
const ALL_KINDS: [SandboxStep, StepEvent][] = [
  [step('booked', 0, 'Mumbai'), { code: 'booked', reason: null }],
  [step('picked_up', 4, 'Mumbai'), { code: 'booked', reason: null }],
  [step('bagged', 6, 'Mumbai'), { code: 'bagged', reason: null }],
  [step('hub_out', 7, 'Mumbai'), { code: 'dispatched', reason: null }],
  [step('hold', 20, 'Nagpur', { remark: 'Flight cancelled due to fog', ndr: 'other' }), { code: 'exception', reason: 'other' }],
  [step('hub_in', 40, 'Kolkata'), { code: 'received', reason: null }],
  [step('out_for_delivery', 43, 'Kolkata'), { code: 'out_for_delivery', reason: null }],
  [step('attempt_failed', 47, 'Kolkata', { ndr: 'address_issue' }), { code: 'delivery_attempted', reason: 'address_issue' }],
  [step('unmapped', 50, 'Kolkata'), { code: 'unknown', reason: null }],
  [step('attempt_failed', 66, 'Kolkata', { ndr: 'refused', remark: 'Addressee refused, call 9876543210' }), { code: 'delivery_attempted', reason: 'refused' }],
  [step('rto_initiated', 70, 'Kolkata'), { code: 'rto_initiated', reason: null }],
  [step('rto_in_transit', 80, 'Nagpur'), { code: 'dispatched', reason: null }],
  [step('rto_delivered', 110, 'Mumbai'), { code: 'rto_delivered', reason: null }],
];

describe('speedpost sandbox round trip', () => {
  it('maps every step kind to its event code at the right UTC instant', () => {
    const { record } = roundTrip(shipmentOf(ALL_KINDS.map(([s]) => s)));
    expectStepEvents(record, ALL_KINDS);
    expect([record.status, record.is_rto, record.insights.current_stage]).toEqual(['returned', true, 'rto_delivered']);
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual(['address_issue', 'refused']);
    // The hold keeps the article moving: not an attempt, not an exception.
    expect(eventAt(record, ALL_KINDS[4]![0]).status).toBe('in_transit');
  });

  it('writes the booking glued to its detail, as Speed Post does', () => {
    const body = render(shipmentOf(ALL_KINDS.map(([s]) => s))).body;
    expect(body).toContain('"event":"Item BookItem Book At Mumbai H.O"');
    expect(body).toContain('"article_type":"Speed Post"');
  });

  it('keeps the newest-first order, the header, the EDD and the remark with personal data', () => {
    const shipment = shipmentOf(ALL_KINDS.map(([s]) => s));
    const { parsed: { scans }, record } = roundTrip(shipment);
    expect(scanInstants(scans)).toEqual([...shipment.steps].reverse().map((s) => s.at));
    expect([record.origin?.pincode, record.destination?.pincode]).toEqual(['400001', '700001']);
    expect(record.estimated_delivery_at).toBe(new Date(shipment.edd!).toISOString());
    expect(record.shipment).toMatchObject({ service_type: 'speed_post', weight_grams: 250 });
    expect(render(shipment).body).toContain('Addressee refused, call 9876543210');
    expect(scans.find((s) => s.remarks?.includes('9876543210'))?.raw_status).toBe('Item Not Delivered');
  });

  it.each<NdrReason>(['customer_unavailable', 'address_issue', 'refused', 'premises_closed', 'cod_not_ready', 'other'])(
    'a failed attempt for %s without a remark gives that NDR reason',
    (ndr) => {
      const { record } = roundTrip(shipmentOf([
        step('picked_up', 0, 'Mumbai'), step('out_for_delivery', 30, 'Kolkata'), step('attempt_failed', 34, 'Kolkata', { ndr }),
      ]));
      expect([record.status, record.insights.current_stage]).toEqual(['exception', 'delivery_attempted']);
      expect(record.delivery_attempts.attempts[0]).toMatchObject({ outcome: 'failed', reason_code: ndr });
    },
  );

  it('maps a delivery, a cancellation and a lost article', () => {
    const delivered = [step('booked', 0, 'Mumbai'), step('out_for_delivery', 40, 'Kolkata'), step('delivered', 44, 'Kolkata')];
    const d = roundTrip(shipmentOf(delivered)).record;
    expect([eventAt(d, delivered[2]!).code, d.status, d.delivered_at]).toEqual(['delivered', 'delivered', new Date(delivered[2]!.at).toISOString()]);
    const cancelled = [step('booked', 0, 'Mumbai'), step('cancelled', 20, 'Mumbai')];
    const c = roundTrip(shipmentOf(cancelled)).record;
    expect([eventAt(c, cancelled[1]!).code, c.status]).toEqual(['exception', 'cancelled']);
    const lost = [step('booked', 0, 'Mumbai'), step('hub_in', 8, 'Nagpur'), step('lost', 90, 'Nagpur')];
    const l = roundTrip(shipmentOf(lost)).record;
    expect([eventAt(l, lost[2]!).code, l.status, l.insights.current_stage]).toEqual(['exception', 'exception', 'exception']);
  });

  it('emits shuffled same-day scans exactly in the given order', () => {
    const given = [step('bagged', 6, 'Mumbai'), step('hub_out', 7, 'Mumbai'), step('booked', 0, 'Mumbai')];
    const { scans } = roundTrip(shipmentOf(given, { shuffled: true })).parsed;
    expect(scanInstants(scans)).toEqual(given.map((s) => s.at));
  });

  it('checks the bearer token and answers the failure scenarios the carrier\'s way', () => {
    const lookup = () => ({ kind: 'shipment', shipment: shipmentOf(ALL_KINDS.map(([s]) => s)) }) as const;
    expect(trackingRoute.handle(trackingRequest(null), { article: AWB }, lookup).status).toBe(401);
    const reply = (kind: 'not_found' | 'down' | 'malformed') => adapter.parse(AWB, asNativeResponse(trackingRoute.handle(trackingRequest(SANDBOX_TOKEN), { article: AWB }, () => ({ kind }))));
    expect(reply('not_found')).toEqual({ outcome: 'not_found' });
    expect(reply('down')).toEqual({ outcome: 'error', error: 'HTTP 503' });
    expect(reply('malformed').outcome).toBe('error');
  });

  it('survives 2000 mutations of a sandbox body', () => {
    fuzzParser(adapter, AWB, render(shipmentOf(ALL_KINDS.map(([s]) => s))), 2000, 7);
  });
});
