import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/dtdc.ts';
import { istParts, istToMs } from '../../sandbox/ist.ts';
import type { SandboxShipment, SandboxStep, ScenarioAnswer, StepKind } from '../../sandbox/types.ts';
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

const AWB = requireAwb('V01230104');
const ok = (body: unknown, status = 200): NativeResponse => ({
  status, headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** Hand-written after the JSON sample of DTDC's tracking API document (2.2), not the sandbox's output. */
const REAL_BODY = {
  statusCode: 200,
  statusFlag: true,
  status: 'SUCCESS',
  errorDetails: null,
  trackHeader: {
    strShipmentNo: 'B32242001', strRefNo: '', strCNType: 'CP', strCNTypeCode: 'BF014', strCNTypeName: 'AVENUE ROAD',
    strCNProduct: 'LITE', strModeCode: '', strMode: '', strCNProdCODFOD: '', strOrigin: 'BANGALORE', strOriginRemarks: 'Booked By',
    strBookedDate: '21062017', strBookedTime: '15:30:25', strPieces: '1', strWeightUnit: 'KG', strWeight: '0.1000',
    strDestination: 'MUMBAI', strStatus: 'Delivered', strStatusTransOn: '22062017', strStatusTransTime: '1614',
    strStatusRelCode: '', strStatusRelName: '', strRemarks: 'SIGN', strNoOfAttempts: '2', strRtoNumber: '',
  },
  trackDetails: [
    { strCode: 'BKD', strAction: 'Booked', strManifestNo: '', strOrigin: 'BANGALORE SURFACE APEX', strDestination: '', strActionDate: '21062017', strActionTime: '1530', sTrRemarks: '' },
    { strCode: 'OBMD', strAction: 'In Transit', strManifestNo: 'B7701202', strOrigin: 'BANGALORE SURFACE APEX', strDestination: 'MUMBAI APEX', strActionDate: '21062017', strActionTime: '1533', sTrRemarks: '' },
    { strCode: 'CDOUT', strAction: 'In Transit', strManifestNo: '', strOrigin: 'BANGALORE SURFACE APEX', strDestination: 'MUMBAI APEX', strActionDate: '21062017', strActionTime: '1546', sTrRemarks: '' },
    { strCode: 'CDIN', strAction: 'In Transit', strManifestNo: '', strOrigin: 'MUMBAI APEX', strDestination: '', strActionDate: '22062017', strActionTime: '0555', sTrRemarks: '' },
    { strCode: 'IPMF', strAction: 'In Transit', strManifestNo: 'B7701203', strOrigin: 'MUMBAI APEX', strDestination: '', strActionDate: '22062017', strActionTime: '0603', sTrRemarks: '0.00' },
    { strCode: 'HLD', strAction: 'HELDUP', strManifestNo: '', strOrigin: 'MUMBAI APEX', strDestination: '', strActionDate: '22062017', strActionTime: '0700', sTrRemarks: 'HEAVY RAIN' },
    { strCode: 'OUTDLV', strAction: 'Out For Delivery', strManifestNo: '', strOrigin: 'MUMBAI APEX', strDestination: '', strActionDate: '22062017', strActionTime: '1011', sTrRemarks: '' },
    { strCode: 'NONDLV', strAction: 'Not Delivered', strManifestNo: '', strOrigin: 'MUMBAI APEX', strDestination: '', strActionDate: '22062017', strActionTime: '1230', sTrRemarks: 'PARTY NOT AVAILABLE' },
    { strCode: 'DLV', strAction: 'Delivered', strManifestNo: '', strOrigin: 'MUMBAI APEX', strDestination: '', strActionDate: '22062017', strActionTime: '1614', sTrRemarks: 'SIGN' },
  ],
};

describe('dtdc parser on real-shaped answers', () => {
  const parsed = expectOk(adapter.parse(requireAwb('B32242001'), ok(REAL_BODY)));

  it('reads DDMMYYYY + HHMM action times as IST wall times, in the carrier order', () => {
    expect(parsed.scans.map((s) => s.occurred_at)).toEqual([
      '2017-06-21T15:30:00', '2017-06-21T15:33:00', '2017-06-21T15:46:00', '2017-06-22T05:55:00', '2017-06-22T06:03:00',
      '2017-06-22T07:00:00', '2017-06-22T10:11:00', '2017-06-22T12:30:00', '2017-06-22T16:14:00',
    ]);
  });

  it('reads strAction as raw_status, strCode as raw_code, the sTrRemarks key as remarks', () => {
    expect(parsed.scans[7]).toEqual({
      occurred_at: '2017-06-22T12:30:00', raw_status: 'Not Delivered', raw_code: 'NONDLV', remarks: 'PARTY NOT AVAILABLE', location: 'MUMBAI APEX',
    });
    expect(parsed.scans[0]!.remarks).toBeNull();
  });

  it('reads the header: booked time with seconds, kg weight, offices', () => {
    expect(parsed.shipment).toEqual({
      origin: { city: 'BANGALORE', state: null, pincode: null },
      destination: { city: 'MUMBAI', state: null, pincode: null },
      service_type: 'express',
      weight_grams: 100,
      booked_at: '2017-06-21T15:30:25',
      estimated_delivery_at: null,
    });
  });

  it('maps the journey through the product rules: codes decide the "In Transit" moves, HELDUP is no attempt', () => {
    const record = answer(makePoll({ carrier: 'dtdc', awb: 'B32242001', scans: parsed.scans, shipment: parsed.shipment }), '2017-06-23T00:00:00Z');
    expect(record.events.map((e) => e.code).reverse()).toEqual([
      'booked', 'dispatched', 'dispatched', 'received', 'received', 'exception', 'out_for_delivery', 'delivery_attempted', 'delivered',
    ]);
    expect(record.delivery_attempts.count).toBe(2);
    expect(record.delivery_attempts.attempts[0]?.reason_code).toBe('customer_unavailable');
    expect(record.status).toBe('delivered');
  });

  it('reads the older strRemarks spelling, mode SURFACE and an EDD date', () => {
    const body: { trackHeader: Record<string, string>; trackDetails: Record<string, string>[] } = structuredClone(REAL_BODY);
    body.trackHeader.strMode = 'SURFACE';
    body.trackHeader.strExpectedDeliveryDate = '25062017';
    delete body.trackDetails[7]!.sTrRemarks;
    body.trackDetails[7]!.strRemarks = 'ADDRESS NOT FOUND';
    const result = expectOk(adapter.parse(requireAwb('B32242001'), ok(body)));
    expect(result.shipment?.service_type).toBe('surface');
    expect(result.shipment?.estimated_delivery_at).toBe('2017-06-25T23:59:59');
    expect(result.scans[7]!.remarks).toBe('ADDRESS NOT FOUND');
  });

  it('reads "NO DATA FOUND FOR THIS CNNO NUMBER" as not found', () => {
    const body = {
      statusCode: 200, statusFlag: false, status: 'FAILED',
      errorDetails: [{ name: 'strShipmentNo', value: '11111' }, { name: 'strError', value: 'NO DATA FOUND FOR THIS CNNO NUMBER' }],
      trackHeader: null, trackDetails: null,
    };
    expect(adapter.parse(requireAwb('11111'), ok(body))).toEqual({ outcome: 'not_found' });
  });
});

describe('dtdc parser: broken answers', () => {
  it.each([
    ['truncated JSON', ok('{"statusCode":200,"statusFlag":true,"status":"SUCCESS","trackHeader":{"strShipmentNo":"V01230104","strOrigin":"BANGAL')],
    ['an HTML error page', { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>Error Occurred</h1></body></html>' }],
    ['an empty 200', ok('')],
    ['a 500', ok('Error Occurred', 500)],
    ['a 401', ok({ statusCode: 401, statusFlag: false, status: 'FAILED' }, 401)],
    ['a FAILED answer without data', ok({ statusCode: 206, statusFlag: false, status: 'FAILED', errorDetails: [{ name: 'strcnno', value: 'Partial content' }] })],
    ['SUCCESS without trackHeader', ok({ statusCode: 200, statusFlag: true, status: 'SUCCESS', trackDetails: [] })],
    ['an action with an impossible date', ok({ ...REAL_BODY, trackDetails: [{ ...REAL_BODY.trackDetails[0], strActionDate: '31022017' }] })],
    ['an action with a bad time', ok({ ...REAL_BODY, trackDetails: [{ ...REAL_BODY.trackDetails[0], strActionTime: '2575' }] })],
  ])('gives an error outcome for %s', (_name, response) => {
    expect(adapter.parse(AWB, response).outcome).toBe('error');
  });

  it('survives 2000 mutations of a real answer', () => {
    fuzzParser(adapter, 'B32242001', ok(REAL_BODY), 2000);
  });
});

describe('dtdc fetch: authenticate, then track with X-Access-Token', () => {
  const recorder = (answers: Record<'auth' | 'track', NativeResponse[]>) =>
    queuedSend((request) => answers[request.url.includes('/authenticate') ? 'auth' : 'track']);
  const credentials = { username: 'shop', password: 's3cret&x' };

  it('logs in with username/password, then POSTs the tracking body as an idempotent read', async () => {
    const { sent, send } = recorder({ auth: [ok('tok-1')], track: [ok(REAL_BODY)] });
    const response = await adapter.fetch(AWB, { baseUrl: 'https://dtdc.example/dtdc-api', credentials }, send);
    expect(response.status).toBe(200);
    expect(sent[0]).toEqual({ method: 'GET', url: 'https://dtdc.example/dtdc-api/api/dtdc/authenticate?username=shop&password=s3cret%26x' });
    expect(sent[1]).toEqual({
      method: 'POST',
      url: 'https://dtdc.example/dtdc-api/rest/JSONCnTrk/getTrackDetails',
      headers: { 'X-Access-Token': 'tok-1', 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ trkType: 'cnno', strcnno: AWB, addtnlDtl: 'Y' }),
      idempotent: true,
    });
  });

  it('reuses the token for the next lookup on the same endpoint', async () => {
    const { sent, send } = recorder({ auth: [ok('tok-2')], track: [ok(REAL_BODY), ok(REAL_BODY)] });
    const endpoint = { baseUrl: 'https://dtdc.example/reuse', credentials };
    await adapter.fetch(AWB, endpoint, send);
    await adapter.fetch(requireAwb('V01230105'), endpoint, send);
    expect(sent.map((r) => r.method)).toEqual(['GET', 'POST', 'POST']);
  });

  it('logs in again once when DTDC rejects the cached token', async () => {
    const { sent, send } = recorder({ auth: [ok('old'), ok('"new"')], track: [ok(REAL_BODY), ok('Unauthorized', 401), ok(REAL_BODY)] });
    const endpoint = { baseUrl: 'https://dtdc.example/expiry', credentials };
    await adapter.fetch(AWB, endpoint, send);
    const response = await adapter.fetch(AWB, endpoint, send);
    expect(response.status).toBe(200);
    expect(sent.map((r) => r.method)).toEqual(['GET', 'POST', 'POST', 'GET', 'POST']);
    expect(sent[4]!.headers?.['X-Access-Token']).toBe('new');
  });

  it('answers with the failed login, which parses as an error', async () => {
    const { sent, send } = recorder({ auth: [ok('Unauthorized', 401)], track: [] });
    const response = await adapter.fetch(AWB, { baseUrl: 'https://dtdc.example/bad-login', credentials }, send);
    expect(sent).toHaveLength(1);
    expect(adapter.parse(AWB, response)).toEqual({ outcome: 'error', error: 'credentials rejected (HTTP 401)' });
  });

  it('treats a login answer without a token as a failure', async () => {
    const { send } = recorder({ auth: [ok('<html><body>maintenance</body></html>')], track: [] });
    const response = await adapter.fetch(AWB, { baseUrl: 'https://dtdc.example/no-token', credentials }, send);
    expect(adapter.parse(AWB, response).outcome).toBe('error');
  });
});

// ---- Round trip: sandbox renderer → HTTP shape → adapter → product normalization ----

const T0 = Date.UTC(2026, 10, 10, 3, 30); // 09:00 IST

const step = (kind: StepKind, hour: number, extra: Partial<SandboxStep> = {}) => storyStep(kind, T0 + hour * HOUR, 'Nagpur Central Hub', extra);

const shipmentOf = shipmentBuilder({
  carrier: 'dtdc', awb: AWB, scenario: 4, lane: 1, ...MUMBAI_TO_KOLKATA,
  bookedAt: T0 - 5 * HOUR, edd: T0 + 72 * HOUR, weightGrams: 1375, serviceType: 'surface',
});

const SANDBOX_ENDPOINT = { baseUrl: 'http://sandbox.test/dtdc', credentials: { username: 'sandbox', password: 'sandbox' } };
const roundTrip = (shipment: SandboxShipment) => fetchAndNormalize(adapter, renderer, SANDBOX_ENDPOINT, shipment, T0 + 40 * HOUR);

const iso = (ms: number) => new Date(ms).toISOString();

describe('dtdc round trip through the sandbox renderer', () => {
  const everyKind = everyKindStory(step);
  const expected: Record<StepKind, EventCode> = {
    // DTDC books at its own counter, so booking and pickup texts both map to `booked` (dtdc.yaml).
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

  it('keeps the carrier order (oldest first) and the header', async () => {
    const { parsed, record } = await roundTrip(shipmentOf(everyKind));
    expect(scanInstants(parsed.scans)).toEqual(everyKind.map((s) => s.at));
    expect(record.origin?.pincode).toBe('400001');
    expect(record.destination?.pincode).toBe('700001');
    const edd = istParts(T0 + 72 * HOUR);
    expect(record.estimated_delivery_at).toBe(iso(istToMs(Number(edd.year), Number(edd.month), Number(edd.day), 23, 59, 59)));
    expect(record.shipment.weight_grams).toBe(1375);
    expect(record.shipment.service_type).toBe('surface');
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
    // A counter booking is already a physical scan at DTDC.
    ['booked', 'picked_up', 'in_transit', ['booked']],
  ])('a story ending %s gives record status %s, stage %s', async (_name, status, stage, kinds) => {
    const steps = kinds.map((kind, i) => step(kind, i * 3, kind === 'attempt_failed' ? { ndr: 'customer_unavailable' } : {}));
    const { record } = await roundTrip(shipmentOf(steps));
    expect(record.status).toBe(status);
    expect(record.insights.current_stage).toBe(stage);
  });
});

describe('dtdc sandbox routes', () => {
  const [authRoute, trackRoute] = renderer.routes as [typeof renderer.routes[0], typeof renderer.routes[0]];
  const shipment = shipmentOf([step('booked', 0)]);
  const lookup = (): ScenarioAnswer => ({ kind: 'shipment', shipment });
  const trackRequest = (headers: Record<string, string>, body = JSON.stringify({ trkType: 'cnno', strcnno: AWB, addtnlDtl: 'Y' })) =>
    ({ method: 'POST', path: trackRoute.path, query: {}, headers, body });
  const token = () => authRoute.handle({ method: 'GET', path: authRoute.path, query: { username: 'sandbox', password: 'sandbox' }, headers: {}, body: '' }, {}, lookup).body;

  it('authenticates only the sandbox credentials', () => {
    const bad = authRoute.handle({ method: 'GET', path: authRoute.path, query: { username: 'sandbox', password: 'x' }, headers: {}, body: '' }, {}, lookup);
    expect(bad.status).toBe(401);
    expect(token()).toMatch(/^\S+$/);
  });

  it('answers 401 without or with a wrong token, 400 for a body that is no tracking request', () => {
    expect(trackRoute.handle(trackRequest({}), {}, lookup).status).toBe(401);
    expect(trackRoute.handle(trackRequest({ 'x-access-token': 'forged' }), {}, lookup).status).toBe(401);
    expect(trackRoute.handle(trackRequest({ 'x-access-token': token() }, '{"strcnno":'), {}, lookup).status).toBe(400);
  });

  it('renders not found, malformed and down the carrier way', () => {
    const headers = { 'x-access-token': token() };
    const notFound = trackRoute.handle(trackRequest(headers), {}, () => ({ kind: 'not_found' }));
    expect(adapter.parse(AWB, { status: notFound.status, headers: {}, body: notFound.body })).toEqual({ outcome: 'not_found' });
    const malformed = trackRoute.handle(trackRequest(headers), {}, () => ({ kind: 'malformed' }));
    expect(malformed.status).toBe(200);
    expect(adapter.parse(AWB, { status: 200, headers: {}, body: malformed.body }).outcome).toBe('error');
    expect(trackRoute.handle(trackRequest(headers), {}, () => ({ kind: 'down' })).status).toBe(503);
  });
});
