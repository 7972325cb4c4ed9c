import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/indiapost.ts';
import type { SandboxRequest, SandboxShipment, SandboxStep, ScenarioAnswer, StepKind } from '../../sandbox/types.ts';
import { makePoll } from '../../testutil/polls.ts';
import { answer } from '../../testutil/product.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { queuedSend } from '../../../test/support/carriers/recording-send.ts';
import { expectOk, normalizeAnswer, scanInstants } from '../../../test/support/carriers/round-trip.ts';
import { asNativeResponse, sandboxSend } from '../../../test/support/carriers/sandbox-transport.ts';
import { eventAt, expectStepEvents, type StepEvent } from '../../../test/support/carriers/step-events.ts';
import { AHMEDABAD_TO_PUNE, FAILED_ATTEMPT_CASES, HOUR, shipmentBuilder, storyStep } from '../../../test/support/carriers/story.ts';
import type { NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';
import { createPostalAdapter, splitPostalEvent } from './postal.ts';
import { requireAwb } from '../../schemas/index.ts';

const AWB = requireAwb('RK123450304IN');
/** 2026-11-16 09:00 IST. */
const START = Date.UTC(2026, 10, 16, 3, 30);
const BASE_URL = 'http://127.0.0.1:4010/indiapost';

const response = (body: string, status = 200): NativeResponse => ({ status, headers: { 'content-type': 'application/json' }, body });

// ---------------------------------------------------------------- hand-written native bodies

const detail = (date: string, time: string, office: string, event: string) => ({ date: `${date}T00:00:00Z`, time, office, event });

const REAL_BODY = JSON.stringify({
  status_code: 200,
  success: true,
  message: 'Success',
  data: [{
    booking_details: {
      article_number: AWB,
      article_type: 'Registered Parcel',
      booked_at: 'Dhule Jaihind Colony S.O',
      booked_on: '2026-11-16T00:00:00Z',
      booking_time: '10:12:45',
      origin_pincode: '424002',
      destination_pincode: '411001',
      delivery_location: 'Pune City H.O',
      weight: '740.00',
      edd: '2026-11-20T00:00:00Z',
    },
    tracking_details: [
      detail('2026-11-19', '13:05:11', 'Pune City H.O', 'Item Delivered'),
      detail('2026-11-19', '08:41:09', 'Pune City H.O', 'Out for Delivery'),
      detail('2026-11-18', '16:02:37', 'Pune City H.O', 'Door Locked'),
      detail('2026-11-18', '08:30:00', 'Pune City H.O', 'Out for Delivery'),
      detail('2026-11-18', '05:15:52', 'Pune NSH', 'Item Received'),
      detail('2026-11-17', '21:48:03', 'Nashik NSH', 'Item Despatched'),
      detail('2026-11-17', '15:31:52', 'Nashik NSH', 'Item Bagged '),
      detail('2026-11-16', '10:12:45', 'Dhule Jaihind Colony S.O', 'Item Booked '),
    ],
  }],
});

describe('postal event labels', () => {
  it.each([
    ['Item Booked ', 'Item Booked', null],
    ['Item BookItem Book At Dhule Jaihind Colony S.O', 'Item Book', 'Item Book At Dhule Jaihind Colony S.O'],
    ['Item Not Delivered - Addressee Absent', 'Item Not Delivered', 'Addressee Absent'],
    ['Item Bagged  - ', 'Item Bagged', null],
    ['Item Booked Item Bagged', 'Item Booked Item Bagged', null],
  ])('splits %j into label and detail', (event, label, detail) => {
    expect(splitPostalEvent(event)).toEqual({ label, detail });
  });
});

describe('indiapost parser on native bodies', () => {
  it('combines the date dressed as UTC midnight with the IST time, keeping the carrier order', () => {
    const scans = expectOk(adapter.parse(AWB, response(REAL_BODY))).scans;
    expect(scans.map((s) => s.occurred_at)).toEqual([
      '2026-11-19T13:05:11', '2026-11-19T08:41:09', '2026-11-18T16:02:37', '2026-11-18T08:30:00',
      '2026-11-18T05:15:52', '2026-11-17T21:48:03', '2026-11-17T15:31:52', '2026-11-16T10:12:45',
    ]);
  });

  it('trims trailing spaces of labels and keeps the office as location', () => {
    const scans = expectOk(adapter.parse(AWB, response(REAL_BODY))).scans;
    expect(scans[7]).toEqual({ occurred_at: '2026-11-16T10:12:45', raw_status: 'Item Booked', raw_code: null, remarks: null, location: 'Dhule Jaihind Colony S.O' });
    expect(scans[6]!.raw_status).toBe('Item Bagged');
  });

  it('reads the booking details: offices, pincodes, article type, grams, EDD date as the end of that day', () => {
    const parsed = adapter.parse(AWB, response(REAL_BODY));
    expect(parsed.outcome === 'ok' && parsed.shipment).toEqual({
      origin: { office: 'Dhule Jaihind Colony S.O', city: null, state: null, pincode: '424002' },
      destination: { office: 'Pune City H.O', city: null, state: null, pincode: '411001' },
      service_type: 'surface',
      weight_grams: 740,
      booked_at: '2026-11-16T10:12:45',
      estimated_delivery_at: '2026-11-20T23:59:59',
    });
  });

  it('normalizes into a delivered record whose "Door Locked" attempt is premises_closed', () => {
    const parsed = adapter.parse(AWB, response(REAL_BODY));
    if (parsed.outcome !== 'ok') throw new Error('expected ok');
    const record = answer(makePoll({ carrier: 'indiapost', awb: AWB, scans: parsed.scans, shipment: parsed.shipment }));
    expect(record.status).toBe('delivered');
    expect(record.delivered_at).toBe('2026-11-19T07:35:11.000Z');
    expect(record.delivery_attempts.attempts[0]).toMatchObject({ outcome: 'failed', reason_code: 'premises_closed' });
    expect(record.events.map((e) => e.code)).toEqual([
      'delivered', 'out_for_delivery', 'delivery_attempted', 'out_for_delivery', 'received', 'dispatched', 'bagged', 'booked',
    ]);
  });

  it('picks this article out of a bulk answer', () => {
    const bulk = JSON.parse(REAL_BODY) as { data: { booking_details: { article_number: string } }[] };
    const other = structuredClone(bulk.data[0]!);
    other.booking_details.article_number = 'RK999999999IN';
    bulk.data.unshift(other);
    expect(expectOk(adapter.parse(AWB, response(JSON.stringify(bulk)))).scans).toHaveLength(8);
  });

  it('answers not_found for a 404, a "no record" failure and an empty data list', () => {
    expect(adapter.parse(AWB, response('{"status_code":404,"success":false,"message":"No record found for the given article number"}', 404))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, response('{"status_code":200,"success":false,"message":"Article details not found"}'))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, response('{"status_code":200,"success":true,"data":[]}'))).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['an empty 200', response('')],
    ['truncated JSON', response(REAL_BODY.slice(0, 400))],
    ['an HTML error page', response('<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>')],
    ['a 401', response('{"status_code":401,"success":false,"message":"Unauthorized"}', 401)],
    ['a failure that is not "not found"', response('{"status_code":200,"success":false,"message":"Token expired"}')],
    ['no tracking_details', response(`{"success":true,"data":[{"booking_details":{"article_number":"${AWB}"}}]}`)],
    ['an event without time', response(`{"success":true,"data":[{"tracking_details":[{"date":"2026-11-19T00:00:00Z","office":"Pune","event":"Item Delivered"}]}]}`)],
    ['a date with a real time of day', response(`{"success":true,"data":[{"tracking_details":[{"date":"2026-11-19T10:00:00Z","time":"10:00:00","event":"Item Delivered"}]}]}`)],
    ['an impossible time', response(`{"success":true,"data":[{"tracking_details":[{"date":"2026-11-19T00:00:00Z","time":"25:61:00","event":"Item Delivered"}]}]}`)],
    ['another article\'s answer', response('{"success":true,"data":[{"booking_details":{"article_number":"RK999999999IN"},"tracking_details":[]}]}')],
  ])('answers error for %s', (_name, body) => {
    expect(adapter.parse(AWB, body).outcome).toBe('error');
  });

  it('survives 2000 mutations of a realistic body', () => {
    fuzzParser(adapter, AWB, response(REAL_BODY), 2000);
  });
});

// ---------------------------------------------------------------- request shape and login

const LOGIN_OK = response('{"status_code":200,"success":true,"data":{"access_token":"tok-1","token_type":"Bearer","expires_in":3600}}');

/** A recording transport answering logins with `logins` in turn and tracking calls with `tracking`. */
const recorder = (logins: NativeResponse[], tracking: NativeResponse[]) =>
  queuedSend((request) => (request.url.endsWith('/v1/access/login') ? logins : tracking));

const endpoint = { baseUrl: BASE_URL, credentials: { username: 'shop-42', password: 'secret' } };

describe('indiapost fetch', () => {
  it('logs in with username and password, then GETs /v1/tracking/<article> with the bearer token', async () => {
    const { sent, send } = recorder([LOGIN_OK], [response(REAL_BODY)]);
    const reply = await createPostalAdapter('indiapost').fetch(AWB, endpoint, send);
    expect(reply.body).toBe(REAL_BODY);
    expect(sent).toEqual([
      {
        method: 'POST',
        url: `${BASE_URL}/v1/access/login`,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: '{"username":"shop-42","password":"secret"}',
        idempotent: true,
      },
      { method: 'GET', url: `${BASE_URL}/v1/tracking/${AWB}`, headers: { authorization: 'Bearer tok-1', accept: 'application/json' } },
    ]);
  });

  it('reuses the token until it expires, then logs in again', async () => {
    let now = START;
    const postal = createPostalAdapter('indiapost', () => now);
    const { sent, send } = recorder([LOGIN_OK, LOGIN_OK], [response(REAL_BODY), response(REAL_BODY), response(REAL_BODY)]);
    await postal.fetch(AWB, endpoint, send);
    await postal.fetch(AWB, endpoint, send);
    expect(sent.map((r) => r.method)).toEqual(['POST', 'GET', 'GET']);
    now += HOUR;
    await postal.fetch(AWB, endpoint, send);
    expect(sent.map((r) => r.method)).toEqual(['POST', 'GET', 'GET', 'POST', 'GET']);
  });

  it('logs in again once when the carrier rejects a cached token', async () => {
    const postal = createPostalAdapter('indiapost');
    const unauthorized = response('{"status_code":401,"success":false,"message":"Unauthorized"}', 401);
    const { sent, send } = recorder([LOGIN_OK, LOGIN_OK], [response(REAL_BODY), unauthorized, response(REAL_BODY)]);
    await postal.fetch(AWB, endpoint, send);
    const reply = await postal.fetch(AWB, endpoint, send);
    expect(reply.status).toBe(200);
    expect(sent.map((r) => r.method)).toEqual(['POST', 'GET', 'GET', 'POST', 'GET']);
  });

  it('hands back a failed login as the answer (an error outcome)', async () => {
    const rejected = response('{"status_code":401,"success":false,"message":"Invalid username or password"}', 401);
    const { sent, send } = recorder([rejected], []);
    const reply = await createPostalAdapter('indiapost').fetch(AWB, endpoint, send);
    expect(sent).toHaveLength(1);
    expect(adapter.parse(AWB, reply)).toEqual({ outcome: 'error', error: 'credentials rejected (HTTP 401: Invalid username or password)' });
  });
});

// ---------------------------------------------------------------- sandbox round trip

const step = (kind: StepKind, hour: number, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, START + hour * HOUR, location, extra);

const shipmentOf = shipmentBuilder({
  carrier: 'indiapost', awb: AWB, scenario: 4, lane: 3, ...AHMEDABAD_TO_PUNE,
  bookedAt: START, edd: START + 96 * HOUR, weightGrams: 500, serviceType: 'surface',
});

const [loginRoute, trackingRoute] = renderer.routes as [typeof renderer.routes[0], typeof renderer.routes[0]];

const trackingRequest = (token: string | null): SandboxRequest => ({
  method: 'GET', path: `/v1/tracking/${AWB}`, query: {}, headers: token === null ? {} : { authorization: `Bearer ${token}` }, body: '',
});

/** A transport that serves the adapter's requests from the sandbox routes. */
const viaSandbox = (lookup: () => ScenarioAnswer) => sandboxSend(renderer, BASE_URL, lookup);

async function track(shipment: SandboxShipment): Promise<NativeResponse> {
  return createPostalAdapter('indiapost').fetch(AWB, { baseUrl: BASE_URL, credentials: { username: 'sandbox', password: 'sandbox' } },
    viaSandbox(() => ({ kind: 'shipment', shipment })));
}

function render(shipment: SandboxShipment): NativeResponse {
  return asNativeResponse(trackingRoute.handle(trackingRequest(SANDBOX_TOKEN), { article: AWB }, () => ({ kind: 'shipment', shipment })));
}

const roundTrip = (shipment: SandboxShipment) => normalizeAnswer(adapter, AWB, render(shipment), START + 200 * HOUR);

/** The token the sandbox login issues (read from the login route, not assumed). */
const SANDBOX_TOKEN = (JSON.parse(loginRoute.handle(
  { method: 'POST', path: '/v1/access/login', query: {}, headers: {}, body: '{"username":"sandbox","password":"sandbox"}' }, {}, () => ({ kind: 'not_found' }),
).body) as { data: { access_token: string } }).data.access_token;

// Postal bookings are the acceptance scan (a pickup is written as one too). A hold is an
// "Item Received" scan whose detail tells of the delay.
const FORWARD: [SandboxStep, StepEvent][] = [
  [step('booked', 0, 'Ahmedabad'), { code: 'booked', reason: null }],
  [step('picked_up', 5, 'Ahmedabad'), { code: 'booked', reason: null }],
  [step('hub_in', 8, 'Ahmedabad'), { code: 'received', reason: null }],
  [step('bagged', 9, 'Ahmedabad'), { code: 'bagged', reason: null }],
  [step('hub_out', 10, 'Ahmedabad'), { code: 'dispatched', reason: null }],
  [step('hold', 16, 'Vadodara', { remark: 'Held due to heavy rain', ndr: 'other' }), { code: 'exception', reason: 'other' }],
  [step('hub_in', 30, 'Pune'), { code: 'received', reason: null }],
  [step('out_for_delivery', 33, 'Pune'), { code: 'out_for_delivery', reason: null }],
  [step('attempt_failed', 38, 'Pune', { ndr: 'customer_unavailable' }), { code: 'delivery_attempted', reason: 'customer_unavailable' }],
  [step('unmapped', 45, 'Pune'), { code: 'unknown', reason: null }],
  [step('out_for_delivery', 57, 'Pune'), { code: 'out_for_delivery', reason: null }],
  [step('delivered', 61, 'Pune', { remark: 'Delivered to Ramesh Kumar, 9876543210' }), { code: 'delivered', reason: null }],
];

describe('indiapost sandbox round trip', () => {
  it('maps every forward step to its event code at the right UTC instant', () => {
    const { record } = roundTrip(shipmentOf(FORWARD.map(([s]) => s)));
    expectStepEvents(record, FORWARD);
    expect(record.status).toBe('delivered');
    expect(record.delivery_attempts.count).toBe(2);
    expect(eventAt(record, FORWARD[5]![0]).status).toBe('in_transit');
  });

  it('writes labels with trailing spaces and dates dressed as UTC midnight', () => {
    const body = render(shipmentOf(FORWARD.map(([s]) => s))).body;
    expect(body).toContain('"event":"Item Booked "');
    // Real feeds end some texts with the bag or office id; it is read into the remarks.
    expect(body).toMatch(/"event":"Item Bagged , PO\d{12}"/);
    const bagged = roundTrip(shipmentOf(FORWARD.map(([s]) => s))).parsed.scans.find((s) => s.raw_status === 'Item Bagged');
    expect(bagged?.remarks).toMatch(/^PO\d{12}$/);
    expect(body).toContain('"date":"2026-11-16T00:00:00Z","time":"09:00:00"');
  });

  it('keeps the newest-first order, the header and the EDD', () => {
    const shipment = shipmentOf(FORWARD.map(([s]) => s));
    const { parsed: { scans }, record } = roundTrip(shipment);
    expect(scanInstants(scans)).toEqual([...shipment.steps].reverse().map((s) => s.at));
    expect(record.origin?.pincode).toBe('380001');
    expect(record.destination?.pincode).toBe('411001');
    expect(record.estimated_delivery_at).toBe(new Date(shipment.edd!).toISOString());
    expect(record.shipment).toMatchObject({ service_type: 'surface', weight_grams: 500, booked_at: new Date(START).toISOString() });
  });

  it('keeps remarks with personal data in the native body and the parsed scan', () => {
    const shipment = shipmentOf(FORWARD.map(([s]) => s));
    expect(render(shipment).body).toContain('Item Delivered - Delivered to Ramesh Kumar, 9876543210');
    expect(roundTrip(shipment).parsed.scans[0]).toMatchObject({ raw_status: 'Item Delivered', remarks: 'Delivered to Ramesh Kumar, 9876543210' });
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
      step('rto_in_transit', 50, 'Vadodara'), step('rto_delivered', 70, 'Ahmedabad'),
    ];
    const inTransit = roundTrip(shipmentOf(steps.slice(0, 5))).record;
    expect([inTransit.status, inTransit.is_rto, inTransit.insights.current_stage]).toEqual(['returned', true, 'rto_in_transit']);
    expect(eventAt(inTransit, steps[3]!).code).toBe('rto_initiated');
    // The return leg's movement is a plain dispatch, on the return journey.
    expect([eventAt(inTransit, steps[4]!).code, eventAt(inTransit, steps[4]!).status]).toEqual(['dispatched', 'returned']);
    const done = roundTrip(shipmentOf(steps)).record;
    expect(eventAt(done, steps[5]!).code).toBe('rto_delivered');
    expect([done.status, done.insights.current_stage]).toEqual(['returned', 'rto_delivered']);
  });

  it('maps a cancellation and a lost article', () => {
    const cancelled = [step('booked', 0, 'Ahmedabad'), step('cancelled', 20, 'Ahmedabad')];
    const c = roundTrip(shipmentOf(cancelled)).record;
    expect(eventAt(c, cancelled[1]!).code).toBe('exception');
    expect([c.status, c.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
    const lost = [step('picked_up', 0, 'Ahmedabad'), step('hub_in', 8, 'Vadodara'), step('lost', 90, 'Vadodara')];
    const l = roundTrip(shipmentOf(lost)).record;
    expect(eventAt(l, lost[2]!).code).toBe('exception');
    expect([l.status, l.insights.current_stage]).toEqual(['exception', 'exception']);
  });

  it('emits shuffled same-day scans exactly in the given order', () => {
    const given = [step('hub_out', 10, 'Ahmedabad'), step('bagged', 5, 'Ahmedabad'), step('hub_in', 8, 'Ahmedabad'), step('booked', 0, 'Ahmedabad')];
    const { parsed: { scans }, record } = roundTrip(shipmentOf(given, { shuffled: true }));
    expect(scanInstants(scans)).toEqual(given.map((s) => s.at));
    expect(record.events.map((e) => e.code)).toEqual(['dispatched', 'received', 'bagged', 'booked']);
  });

  it('logs in and tracks through the sandbox routes with the sandbox credentials', async () => {
    const parsed = adapter.parse(AWB, await track(shipmentOf(FORWARD.map(([s]) => s))));
    expect(expectOk(parsed).scans).toHaveLength(FORWARD.length);
  });

  it('answers wrong credentials and a missing token with the carrier\'s 401', async () => {
    const lookup = () => ({ kind: 'shipment', shipment: shipmentOf(FORWARD.map(([s]) => s)) }) as const;
    const reply = await createPostalAdapter('indiapost').fetch(AWB, { baseUrl: BASE_URL, credentials: { username: 'sandbox', password: 'nope' } }, viaSandbox(lookup));
    expect(reply.status).toBe(401);
    expect(trackingRoute.handle(trackingRequest(null), { article: AWB }, lookup).status).toBe(401);
    expect(trackingRoute.handle(trackingRequest('forged'), { article: AWB }, lookup).status).toBe(401);
  });

  it('answers the failure scenarios the carrier\'s way', () => {
    const reply = (kind: 'not_found' | 'down' | 'malformed') => adapter.parse(AWB, asNativeResponse(trackingRoute.handle(trackingRequest(SANDBOX_TOKEN), { article: AWB }, () => ({ kind }))));
    expect(reply('not_found')).toEqual({ outcome: 'not_found' });
    expect(reply('down')).toEqual({ outcome: 'error', error: 'HTTP 503' });
    expect(reply('malformed')).toEqual({ outcome: 'error', error: 'invalid JSON' });
  });

  it('survives 2000 mutations of a sandbox body', () => {
    fuzzParser(adapter, AWB, render(shipmentOf(FORWARD.map(([s]) => s))), 2000, 7);
  });
});
