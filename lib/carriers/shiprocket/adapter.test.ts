import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/shiprocket.ts';
import type { SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { requireAwb, NDR_REASONS, type EventCode, type NdrReason } from '../../schemas/index.ts';
import { makePoll } from '../../testutil/polls.ts';
import { answer } from '../../testutil/product.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { queuedSend } from '../../../test/support/carriers/recording-send.ts';
import { expectOk, fetchAndNormalize, scanInstants } from '../../../test/support/carriers/round-trip.ts';
import { expectStepEvents } from '../../../test/support/carriers/step-events.ts';
import { AGENT_REMARK, everyKindStory, HOUR, MUMBAI_TO_KOLKATA, RECEIVER_REMARK, shipmentBuilder, storyStep } from '../../../test/support/carriers/story.ts';
import type { NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';

const AWB = requireAwb('141123221080104');
const ok = (body: unknown, status = 200): NativeResponse => ({
  status, headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** Hand-written in Shiprocket's shape (carrier-formats.md): newest first, sr-status string / number / "NA". */
const REAL_BODY = {
  tracking_data: {
    track_status: 1,
    shipment_status: 7,
    shipment_track: [{
      id: 236612717, awb_code: '141123221084922', courier_company_id: 51, shipment_id: 236612717, order_id: 237157589,
      pickup_date: '2022-07-18 20:28:00', delivered_date: '2022-07-19 11:37:00', weight: '0.30', packages: 1,
      current_status: 'Delivered', delivered_to: 'Mumbai', destination: 'Mumbai', consignee_name: 'Rahul Verma',
      origin: 'Banglore', courier_agent_details: null, courier_name: 'Xpressbees Surface', edd: null, pod: 'Available',
    }],
    shipment_track_activities: [
      { date: '2022-07-19 11:37:00', status: 'DLVD', activity: 'Delivered', location: 'MUMBAI, Maharashtra', 'sr-status': '7', 'sr-status-label': 'DELIVERED' },
      { date: '2022-07-19 09:02:00', status: 'OFD', activity: 'Out For Delivery', location: 'MUMBAI, Maharashtra', 'sr-status': 'NA', 'sr-status-label': 'NA' },
      { date: '2022-07-18 21:40:00', status: 'Customer Refused to accept/Order Cancelled', activity: 'Undelivered', location: 'MUMBAI, Maharashtra', 'sr-status': 21, 'sr-status-label': 'UNDELIVERED' },
      { date: '2022-07-18 08:10:00', status: 'Delay due to weather', activity: 'Delayed', location: 'Pune Hub', 'sr-status': 22, 'sr-status-label': 'DELAYED' },
      { date: '2022-07-17 23:05:00', status: 'IT', activity: 'In Transit', location: 'Bengaluru Hub', 'sr-status': '18', 'sr-status-label': 'IN TRANSIT' },
      { date: '2022-07-17 20:28:00', status: 'PKD', activity: 'Picked Up', location: 'Bengaluru', 'sr-status': 42, 'sr-status-label': 'PICKED UP' },
      { date: '2022-07-17 10:00:00', status: 'Shipment Booked', activity: 'Shipment Booked', location: 'NA', 'sr-status': '52', 'sr-status-label': 'SHIPMENT BOOKED' },
    ],
    track_url: 'https://shiprocket.co/tracking/141123221084922',
    etd: '2022-07-20 20:28:00',
  },
};

describe('shiprocket parser on real-shaped answers', () => {
  const parsed = expectOk(adapter.parse(requireAwb('141123221084922'), ok(REAL_BODY)));

  it('keeps the newest-first order and the IST wall times', () => {
    expect(parsed.scans.map((s) => s.occurred_at)).toEqual([
      '2022-07-19T11:37:00', '2022-07-19T09:02:00', '2022-07-18T21:40:00', '2022-07-18T08:10:00',
      '2022-07-17T23:05:00', '2022-07-17T20:28:00', '2022-07-17T10:00:00',
    ]);
  });

  it('reads sr-status strings and numbers alike and "NA" as no code', () => {
    expect(parsed.scans.map((s) => s.raw_code)).toEqual(['7', null, '21', '22', '18', '42', '52']);
  });

  it('reads activity as raw_status and status as remarks (not when it only repeats the activity)', () => {
    expect(parsed.scans[2]).toEqual({
      occurred_at: '2022-07-18T21:40:00', raw_status: 'Undelivered', raw_code: '21', remarks: 'Customer Refused to accept/Order Cancelled', location: 'MUMBAI, Maharashtra',
    });
    expect(parsed.scans[6]!.remarks).toBeNull();
  });

  it('reads the header from shipment_track and etd, never the consignee name', () => {
    expect(parsed.shipment).toEqual({
      origin: { city: 'Banglore', state: null, pincode: null },
      destination: { city: 'Mumbai', state: null, pincode: null },
      service_type: 'surface',
      weight_grams: 300,
      booked_at: null,
      estimated_delivery_at: '2022-07-20T20:28:00',
    });
    expect(JSON.stringify(parsed)).not.toContain('Rahul');
  });

  it('maps the journey through the product rules (codes first, text for "NA")', () => {
    const record = answer(makePoll({ carrier: 'shiprocket', awb: '141123221084922', scans: parsed.scans, shipment: parsed.shipment }), '2022-07-20T00:00:00Z');
    expect(record.events.map((e) => e.code)).toEqual([
      'delivered', 'out_for_delivery', 'delivery_attempted', 'exception', 'dispatched', 'picked_up', 'booked',
    ]);
    expect(record.delivery_attempts.attempts[0]?.reason_code).toBe('refused');
    expect(record.events[3]).toMatchObject({ status: 'in_transit', reason_code: 'other' });
    expect(record.status).toBe('delivered');
  });

  it('reads an answer keyed by the AWB', () => {
    const keyed = expectOk(adapter.parse(requireAwb('141123221084922'), ok({ '141123221084922': REAL_BODY })));
    expect(keyed.scans).toHaveLength(7);
  });

  it('reads "no activities found" (track_status 0) and a JSON 404 as not found', () => {
    const body = {
      tracking_data: {
        track_status: 0, shipment_status: 0, shipment_track: [{ id: 0, awb_code: '', current_status: '' }], shipment_track_activities: null,
        error: 'Aahh! There is no activities found in our DB. Please have some patience it will be updated soon.',
      },
    };
    expect(adapter.parse(AWB, ok(body))).toEqual({ outcome: 'not_found' });
    expect(adapter.parse(AWB, ok({ message: 'AWB not found', status_code: 404 }, 404))).toEqual({ outcome: 'not_found' });
  });
});

describe('shiprocket parser: broken answers', () => {
  it.each([
    ['truncated JSON', ok('{"tracking_data":{"track_status":1,"shipment_track_activities":[{"date":"2026-11-20 09:15:00","status":"IN TRANSIT","activity":"In Tra')],
    ['an HTML error page', { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' }],
    ['an empty 200', ok('')],
    ['a 401', ok({ message: 'Unauthenticated.', status_code: 401 }, 401)],
    ['a 500', ok('Server Error', 500)],
    ['no tracking_data', ok({ message: 'Something went wrong' })],
    ['an activity with an impossible date', ok({ tracking_data: { track_status: 1, shipment_track_activities: [{ date: '2022-13-01 10:00:00', activity: 'In Transit', 'sr-status': 18 }] } })],
    ['an activity without text', ok({ tracking_data: { track_status: 1, shipment_track_activities: [{ date: '2022-07-01 10:00:00', 'sr-status': 18 }] } })],
  ])('gives an error outcome for %s', (_name, response) => {
    expect(adapter.parse(AWB, response).outcome).toBe('error');
  });

  it('survives 2000 mutations of a real answer', () => {
    fuzzParser(adapter, '141123221084922', ok(REAL_BODY), 2000);
  });
});

describe('shiprocket fetch', () => {
  const recorder = (answers: Record<'login' | 'track', NativeResponse[]>) =>
    queuedSend((request) => answers[request.url.includes('/auth/login') ? 'login' : 'track']);
  const credentials = { email: 'api@shop.example', password: 'pa"ss' };

  it('logs in with email/password, then asks GET /v1/external/courier/track/awb/{awb} with the Bearer token', async () => {
    const { sent, send } = recorder({ login: [ok({ id: 7, email: 'api@shop.example', token: 'eyJ.first' })], track: [ok(REAL_BODY)] });
    await adapter.fetch(AWB, { baseUrl: 'https://apiv2.shiprocket.example', credentials }, send);
    expect(sent).toEqual([
      {
        method: 'POST',
        url: 'https://apiv2.shiprocket.example/v1/external/auth/login',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(credentials),
        idempotent: true,
      },
      {
        method: 'GET',
        url: `https://apiv2.shiprocket.example/v1/external/courier/track/awb/${AWB}`,
        headers: { Authorization: 'Bearer eyJ.first', Accept: 'application/json' },
      },
    ]);
  });

  it('reuses the token, and logs in again once when Shiprocket rejects it', async () => {
    const { sent, send } = recorder({ login: [ok({ token: 'old' }), ok({ token: 'new' })], track: [ok(REAL_BODY), ok({ message: 'Token has expired' }, 401), ok(REAL_BODY)] });
    const endpoint = { baseUrl: 'https://apiv2.shiprocket.example/expiry', credentials };
    await adapter.fetch(AWB, endpoint, send);
    const response = await adapter.fetch(AWB, endpoint, send);
    expect(response.status).toBe(200);
    expect(sent.map((r) => r.method)).toEqual(['POST', 'GET', 'GET', 'POST', 'GET']);
    expect(sent[4]!.headers?.Authorization).toBe('Bearer new');
  });

  it('uses a configured token without logging in', async () => {
    const { sent, send } = recorder({ login: [], track: [ok(REAL_BODY)] });
    await adapter.fetch(AWB, { baseUrl: 'https://apiv2.shiprocket.example', credentials: { token: 'eyJ.abc' } }, send);
    expect(sent.map((r) => [r.method, r.headers?.Authorization])).toEqual([['GET', 'Bearer eyJ.abc']]);
  });

  it('answers with a failed login, which parses as an error', async () => {
    const { sent, send } = recorder({ login: [ok({ message: 'Invalid email and password combination', status_code: 403 }, 403)], track: [] });
    const response = await adapter.fetch(AWB, { baseUrl: 'https://apiv2.shiprocket.example/bad-login', credentials }, send);
    expect(sent).toHaveLength(1);
    expect(adapter.parse(AWB, response)).toEqual({ outcome: 'error', error: 'credentials rejected (HTTP 403: Invalid email and password combination)' });
  });

  it('treats a login answer without a token as a failure', async () => {
    const { send } = recorder({ login: [ok('<html>maintenance</html>')], track: [] });
    const response = await adapter.fetch(AWB, { baseUrl: 'https://apiv2.shiprocket.example/no-token', credentials }, send);
    expect(adapter.parse(AWB, response).outcome).toBe('error');
  });

  it('refuses to call without credentials', async () => {
    await expect(adapter.fetch(AWB, { baseUrl: 'http://x', credentials: {} }, async () => ok(''))).rejects.toThrow(/email/);
  });
});

// ---- Round trip: sandbox renderer → HTTP shape → adapter → product normalization ----

const T0 = Date.UTC(2026, 10, 10, 3, 30); // 09:00 IST

const step = (kind: StepKind, hour: number, extra: Partial<SandboxStep> = {}) => storyStep(kind, T0 + hour * HOUR, 'Nagpur Central Hub', extra);

const shipmentOf = shipmentBuilder({
  carrier: 'shiprocket', awb: AWB, scenario: 4, lane: 1, ...MUMBAI_TO_KOLKATA,
  bookedAt: T0 - 5 * HOUR, edd: T0 + 72 * HOUR, weightGrams: 1375, serviceType: 'express',
});

const SANDBOX_ENDPOINT = { baseUrl: 'http://sandbox.test/shiprocket', credentials: { email: 'sandbox', password: 'sandbox' } };
const roundTrip = (shipment: SandboxShipment) => fetchAndNormalize(adapter, renderer, SANDBOX_ENDPOINT, shipment, T0 + 40 * HOUR);

const iso = (ms: number) => new Date(ms).toISOString();

describe('shiprocket round trip through the sandbox renderer', () => {
  const everyKind = everyKindStory(step);
  const expected: Record<StepKind, EventCode> = {
    booked: 'booked', picked_up: 'picked_up', hub_in: 'received', bagged: 'dispatched', hub_out: 'dispatched',
    hold: 'exception', unmapped: 'unknown', out_for_delivery: 'out_for_delivery', attempt_failed: 'delivery_attempted',
    lost: 'exception', cancelled: 'exception', delivered: 'delivered',
    rto_initiated: 'rto_initiated', rto_in_transit: 'dispatched', rto_delivered: 'rto_delivered',
  };

  it('gives every step kind its event code at the right UTC instant', async () => {
    const { record } = await roundTrip(shipmentOf(everyKind));
    expect(record.events).toHaveLength(everyKind.length);
    expectStepEvents(record, everyKind.map((s) => [s, { code: expected[s.kind] }] as const));
    expect(record.events.find((e) => e.code === 'delivery_attempted')?.reason_code).toBe('refused');
    expect(record.events.find((e) => e.timestamp === iso(T0 + 10 * HOUR))?.reason_code).toBe('other');
  });

  it('writes sr-status as strings, numbers and "NA" and still maps the same', async () => {
    const { response, parsed } = await roundTrip(shipmentOf(everyKind));
    const activities = (JSON.parse(response.body) as { tracking_data: { shipment_track_activities: { 'sr-status': unknown }[] } })
      .tracking_data.shipment_track_activities.map((a) => a['sr-status']);
    expect(activities.some((s) => typeof s === 'number')).toBe(true);
    expect(activities.some((s) => typeof s === 'string' && s !== 'NA')).toBe(true);
    expect(activities.filter((s) => s === 'NA').length).toBeGreaterThan(1);
    expect(parsed.scans.some((s) => s.raw_code === null && s.raw_status !== 'Shipment sent for sanitisation')).toBe(true);
  });

  it('keeps the carrier order (newest first) and the header', async () => {
    const { parsed, record } = await roundTrip(shipmentOf(everyKind));
    expect(scanInstants(parsed.scans)).toEqual(everyKind.map((s) => s.at).reverse());
    expect(record.origin?.pincode).toBe('400001');
    expect(record.destination?.pincode).toBe('700001');
    expect(record.estimated_delivery_at).toBe(iso(T0 + 72 * HOUR));
    expect(record.shipment.weight_grams).toBe(1375);
    expect(record.shipment.service_type).toBe('express');
    expect(record.shipment.booked_at).toBe(iso(T0));
  });

  it('puts remarks (personal data included) into the native body for the shared redaction step', async () => {
    const { response } = await roundTrip(shipmentOf(everyKind));
    expect(response.body).toContain(AGENT_REMARK);
    expect(response.body).toContain(RECEIVER_REMARK);
  });

  it('emits a shuffled story exactly in the given order', async () => {
    const shuffled = [step('hub_in', 6), step('booked', 0), step('hub_out', 9), step('picked_up', 2)];
    const { parsed, record } = await roundTrip(shipmentOf(shuffled, { shuffled: true }));
    expect(scanInstants(parsed.scans)).toEqual(shuffled.map((s) => s.at));
    expect(record.events.map((e) => e.code)).toEqual(['dispatched', 'received', 'picked_up', 'booked']);
  });

  it('writes each failed-attempt reason so the product reads the same NDR reason back', async () => {
    const attempts = NDR_REASONS.map((ndr, i) => step('attempt_failed', 4 + i, { ndr, location: 'Kolkata' }));
    const { record } = await roundTrip(shipmentOf([step('booked', 0), step('picked_up', 2), ...attempts]));
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual<NdrReason[]>([...NDR_REASONS]);
    expect(record.status).toBe('exception');
  });

  it('a hold is an exception event with reason other while the shipment stays in transit', async () => {
    const { record } = await roundTrip(shipmentOf([step('booked', 0), step('picked_up', 2), step('hold', 5, { remark: 'Delayed due to cyclone warning', ndr: 'other' })]));
    expect(record.events[0]).toMatchObject({ code: 'exception', reason_code: 'other', status: 'in_transit' });
    expect(record.status).toBe('in_transit');
    expect(record.delivery_attempts.count).toBe(0);
  });

  it.each<[string, string, string, StepKind[]]>([
    ['cancelled before pickup', 'cancelled', 'cancelled', ['booked', 'cancelled']],
    ['lost', 'exception', 'exception', ['booked', 'picked_up', 'lost']],
    ['delivered', 'delivered', 'delivered', ['booked', 'picked_up', 'out_for_delivery', 'delivered']],
    ['returned to origin', 'returned', 'rto_delivered', ['booked', 'picked_up', 'attempt_failed', 'rto_initiated', 'rto_in_transit', 'rto_delivered']],
    ['returning', 'returned', 'rto_in_transit', ['booked', 'picked_up', 'attempt_failed', 'rto_initiated']],
    ['awaiting pickup', 'order_placed', 'awaiting_pickup', ['booked']],
  ])('a story ending %s gives record status %s, stage %s', async (_name, status, stage, kinds) => {
    const steps = kinds.map((kind, i) => step(kind, i * 3, kind === 'attempt_failed' ? { ndr: 'customer_unavailable' } : {}));
    const { record } = await roundTrip(shipmentOf(steps));
    expect(record.status).toBe(status);
    expect(record.insights.current_stage).toBe(stage);
  });
});

describe('shiprocket sandbox routes', () => {
  const route = renderer.routes.find((r) => r.method === 'GET')!;
  const loginRoute = renderer.routes.find((r) => r.method === 'POST')!;
  const request = (headers: Record<string, string>) => ({ method: 'GET', path: `/v1/external/courier/track/awb/${AWB}`, query: {}, headers, body: '' });
  const shipment = shipmentOf([step('booked', 0)]);

  it('logs in only the sandbox user', () => {
    const login = (body: string) => loginRoute.handle({ method: 'POST', path: loginRoute.path, query: {}, headers: {}, body }, {}, () => ({ kind: 'not_found' }));
    expect(login(JSON.stringify({ email: 'sandbox', password: 'nope' })).status).toBe(403);
    expect(login('{"email":').status).toBe(422);
    const token = (JSON.parse(login(JSON.stringify({ email: 'sandbox', password: 'sandbox' })).body) as { token: string }).token;
    expect(route.handle(request({ authorization: `Bearer ${token}` }), { awb: AWB }, () => ({ kind: 'not_found' })).status).toBe(200);
  });

  it('answers 401 without or with a wrong token', () => {
    expect(route.handle(request({}), { awb: AWB }, () => ({ kind: 'shipment', shipment })).status).toBe(401);
    expect(route.handle(request({ Authorization: 'Bearer nope' }), { awb: AWB }, () => ({ kind: 'shipment', shipment })).status).toBe(401);
  });

  it('renders not found, malformed and down the carrier way', () => {
    const auth = { authorization: 'Bearer sandbox' };
    const notFound = route.handle(request(auth), { awb: AWB }, () => ({ kind: 'not_found' }));
    expect(adapter.parse(AWB, { status: notFound.status, headers: {}, body: notFound.body })).toEqual({ outcome: 'not_found' });
    const malformed = route.handle(request(auth), { awb: AWB }, () => ({ kind: 'malformed' }));
    expect(malformed.status).toBe(200);
    expect(adapter.parse(AWB, { status: 200, headers: {}, body: malformed.body }).outcome).toBe('error');
    expect(route.handle(request(auth), { awb: AWB }, () => ({ kind: 'down' })).status).toBe(503);
  });
});
