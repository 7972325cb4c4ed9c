import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/delhivery.ts';
import type { SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { requireAwb, NDR_REASONS, type EventCode, type NdrReason } from '../../schemas/index.ts';
import { makePoll } from '../../testutil/polls.ts';
import { answer } from '../../testutil/product.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { recordingSend } from '../../../test/support/carriers/recording-send.ts';
import { expectOk, fetchAndNormalize, scanInstants } from '../../../test/support/carriers/round-trip.ts';
import { expectStepEvents } from '../../../test/support/carriers/step-events.ts';
import { everyKindStory, HOUR, MUMBAI_TO_KOLKATA, shipmentBuilder, storyStep } from '../../../test/support/carriers/story.ts';
import type { NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';

const AWB = requireAwb('1234567890104');
const ok = (body: unknown, status = 200): NativeResponse => ({
  status, headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** A hand-written answer in Delhivery's real shape (as public client code shows it), not the sandbox's. */
const REAL_BODY = {
  ShipmentData: [{
    Shipment: {
      PickUpDate: '2024-09-21T18:10:52',
      Destination: 'Nakodar',
      DestRecieveDate: null,
      Scans: [
        { ScanDetail: { ScanDateTime: '2024-09-21T14:31:48.752', ScanType: 'UD', Scan: 'Manifested', StatusDateTime: '2024-09-21T14:31:48.752', ScannedLocation: 'Amritsar_VerkaBypss_I (Punjab)', StatusCode: 'X-UCI', Instructions: 'Manifest uploaded' } },
        { ScanDetail: { ScanDateTime: '2024-09-21T18:10:52', ScanType: 'UD', Scan: 'In Transit', StatusDateTime: '2024-09-21T18:10:52', ScannedLocation: 'Amritsar_VerkaBypss_I (Punjab)', StatusCode: 'X-PPOM', Instructions: 'Shipment picked up' } },
        { ScanDetail: { ScanDateTime: '2024-09-21T18:20:25.57', ScanType: 'UD', Scan: 'In Transit', StatusDateTime: '2024-09-21T18:20:25.57', ScannedLocation: 'Amritsar_VerkaBypss_I (Punjab)', StatusCode: 'X-PIOM', Instructions: 'Shipment Recieved at Origin Center' } },
        { ScanDetail: { ScanDateTime: '2024-09-22T09:25:10.1', ScanType: 'UD', Scan: 'In Transit', StatusDateTime: '2024-09-22T09:25:10.1', ScannedLocation: 'Jalandhar_QajiMandi_P (Punjab)', StatusCode: 'X-ILL1F', Instructions: 'Bag Received at Facility' } },
        { ScanDetail: { ScanDateTime: '2024-09-23T10:02:11', ScanType: 'UD', Scan: 'Dispatched', StatusDateTime: '2024-09-23T10:02:11', ScannedLocation: 'Nakodar_Bazar_D (Punjab)', StatusCode: 'X-DDD3FD', Instructions: 'Out for delivery' } },
        { ScanDetail: { ScanDateTime: '2024-09-23T15:40:00', ScanType: 'UD', Scan: 'Undelivered', StatusDateTime: '2024-09-23T15:40:00', ScannedLocation: 'Nakodar_Bazar_D (Punjab)', StatusCode: 'EOD-11', Instructions: 'Consignee Unavailable', geo_location: { lat: 31.1259, long: 75.4754 } } },
        // A return: Delhivery still writes "In Transit", only ScanType RT says it is the return leg.
        { ScanDetail: { ScanDateTime: '2024-09-26T08:00:00.000', ScanType: 'RT', Scan: 'In Transit', StatusDateTime: '2024-09-26T08:00:00.000', ScannedLocation: 'Nakodar_Bazar_D (Punjab)', StatusCode: 'RT-101', Instructions: 'Return to Origin initiated' } },
      ],
      Status: { Status: 'In Transit', StatusLocation: 'Nakodar_Bazar_D (Punjab)', StatusDateTime: '2024-09-26T08:00:00.000', RecievedBy: '', StatusCode: 'RT-101', StatusType: 'RT', Instructions: 'Return to Origin initiated' },
      ChargedWeight: 450.0,
      PickedupDate: '2024-09-21T18:10:52',
      DeliveryDate: null,
      SenderName: '9fd3a1-Seller-do',
      AWB: '26805710004126',
      OrderType: 'COD',
      ExpectedDeliveryDate: '2024-09-24T23:59:59',
      PromisedDeliveryDate: '2024-09-24T23:59:59',
      RTOStartedDate: '2024-09-26T08:00:00.000',
      ReverseInTransit: true,
      Origin: 'Amritsar_VerkaBypss_I (Punjab)',
      Consignee: { City: 'Nakodar', Name: 'PAWANDEEP SINGH', Address1: [], Address2: [], Address3: '', PinCode: 144042, State: 'Punjab', Telephone1: '9876543210', Country: 'India' },
    },
  }],
};

describe('delhivery parser on real-shaped answers', () => {
  const parsed = expectOk(adapter.parse(requireAwb('26805710004126'), ok(REAL_BODY)));

  it('keeps IST wall times offset-less with 0-3 fraction digits, in the carrier order', () => {
    expect(parsed.scans.map((s) => s.occurred_at)).toEqual([
      '2024-09-21T14:31:48.752', '2024-09-21T18:10:52', '2024-09-21T18:20:25.57', '2024-09-22T09:25:10.1',
      '2024-09-23T10:02:11', '2024-09-23T15:40:00', '2024-09-26T08:00:00.000',
    ]);
  });

  it('reads Scan as raw_status, ScanType as raw_code and Instructions as remarks', () => {
    expect(parsed.scans[4]).toEqual({
      occurred_at: '2024-09-23T10:02:11', raw_status: 'Dispatched', raw_code: 'UD', remarks: 'Out for delivery', location: 'Nakodar_Bazar_D (Punjab)',
    });
    expect(parsed.scans[6]!.raw_code).toBe('RT');
  });

  it('reads the header: facility origin, numeric PinCode, grams, EDD, booking', () => {
    expect(parsed.shipment).toEqual({
      origin: { office: 'Amritsar_VerkaBypss_I', city: 'Amritsar', state: 'Punjab', pincode: null },
      destination: { city: 'Nakodar', state: 'Punjab', pincode: '144042' },
      service_type: null,
      weight_grams: 450,
      booked_at: '2024-09-21T18:10:52',
      estimated_delivery_at: '2024-09-24T23:59:59',
    });
  });

  it('never carries the consignee block or geo_location into the poll', () => {
    const text = JSON.stringify(parsed);
    expect(text).not.toContain('PAWANDEEP');
    expect(text).not.toContain('9876543210');
    expect(text).not.toContain('75.4754');
  });

  it('maps the real journey through the product rules, return leg included', () => {
    const record = answer(makePoll({ carrier: 'delhivery', awb: '26805710004126', scans: parsed.scans, shipment: parsed.shipment }), '2024-09-27T00:00:00Z');
    expect(record.events.map((e) => e.code).reverse()).toEqual([
      'booked', 'picked_up', 'received', 'received', 'out_for_delivery', 'delivery_attempted', 'rto_initiated',
    ]);
    expect(record.delivery_attempts.attempts[0]?.reason_code).toBe('customer_unavailable');
    expect(record.is_rto).toBe(true);
  });

  it('picks the asked waybill when ShipmentData holds several', () => {
    const other = structuredClone(REAL_BODY.ShipmentData[0]!);
    other.Shipment.AWB = '99999999999999';
    other.Shipment.Scans = other.Shipment.Scans.slice(0, 1);
    const result = expectOk(adapter.parse(requireAwb('26805710004126'), ok({ ShipmentData: [other, REAL_BODY.ShipmentData[0]] })));
    expect(result.scans).toHaveLength(7);
  });

  it('accepts a space instead of T and an explicit offset', () => {
    const body = structuredClone(REAL_BODY);
    const scans = body.ShipmentData[0]!.Shipment.Scans;
    scans[0]!.ScanDetail.ScanDateTime = '2024-09-21 14:31:48';
    scans[1]!.ScanDetail.ScanDateTime = '2024-09-21T18:10:52+0530';
    const result = expectOk(adapter.parse(requireAwb('26805710004126'), ok(body)));
    expect(result.scans[0]!.occurred_at).toBe('2024-09-21T14:31:48');
    expect(result.scans[1]!.occurred_at).toBe('2024-09-21T18:10:52+05:30');
  });
});

describe('delhivery parser: no data and broken answers', () => {
  it('reads an empty ShipmentData with an error string as not found', () => {
    expect(adapter.parse(AWB, ok({ ShipmentData: [], Error: 'No such waybill or Order Id found' }))).toEqual({ outcome: 'not_found' });
  });

  it('reads a JSON 404 as not found', () => {
    expect(adapter.parse(AWB, ok({ detail: 'Not found.' }, 404))).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['truncated JSON', ok('{"ShipmentData":[{"Shipment":{"AWB":"1234567890104","Scans":[{"ScanDetail":{"ScanDateTime":"2026-')],
    ['an HTML error page', { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' }],
    ['an HTML 404 page (wrong base URL, not a carrier answer)', { status: 404, headers: {}, body: '<html><body>Not Found</body></html>' }],
    ['an empty 200', ok('')],
    ['a 500', ok({ detail: 'Server error' }, 500)],
    ['a 401', ok({ detail: 'Invalid token.' }, 401)],
    ['no ShipmentData', ok({ Error: 'Rate limit exceeded' })],
    ['a scan without a time', ok({ ShipmentData: [{ Shipment: { AWB, Scans: [{ ScanDetail: { Scan: 'Manifested', ScanDateTime: null } }] } }] })],
    ['a scan with an impossible date', ok({ ShipmentData: [{ Shipment: { AWB, Scans: [{ ScanDetail: { Scan: 'Manifested', ScanDateTime: '2024-02-30T10:00:00' } }] } }] })],
    ['a scan without Scan text', ok({ ShipmentData: [{ Shipment: { AWB, Scans: [{ ScanDetail: { ScanDateTime: '2024-09-21T10:00:00' } }] } }] })],
    ['a shipment without Scans', ok({ ShipmentData: [{ Shipment: { AWB } }] })],
  ])('gives an error outcome for %s', (_name, response) => {
    const parsed = adapter.parse(AWB, response);
    expect(parsed.outcome).toBe('error');
  });

  it('survives 2000 mutations of a real answer', () => {
    fuzzParser(adapter, '26805710004126', ok(REAL_BODY), 2000);
  });
});

describe('delhivery fetch', () => {
  it('asks GET /api/v1/packages/json/?waybill= with a Token header', async () => {
    const { sent, send } = recordingSend(() => ok({ ShipmentData: [] }));
    const response = await adapter.fetch(AWB, { baseUrl: 'http://127.0.0.1:4010/delhivery', credentials: { token: 'k3y' } }, send);
    expect(response.status).toBe(200);
    expect(sent).toEqual([{
      method: 'GET',
      url: 'http://127.0.0.1:4010/delhivery/api/v1/packages/json/?waybill=1234567890104',
      headers: { Authorization: 'Token k3y', Accept: 'application/json' },
    }]);
  });

  it('refuses to call without a configured token', async () => {
    await expect(adapter.fetch(AWB, { baseUrl: 'http://x', credentials: {} }, async () => ok(''))).rejects.toThrow(/token/);
  });
});

// ---- Round trip: sandbox renderer → HTTP shape → adapter → product normalization ----

const T0 = Date.UTC(2026, 10, 10, 3, 30); // 09:00 IST

const step = (kind: StepKind, hour: number, extra: Partial<SandboxStep> = {}) => storyStep(kind, T0 + hour * HOUR, 'Nagpur Central Hub', extra);

const shipmentOf = shipmentBuilder({
  carrier: 'delhivery', awb: AWB, scenario: 4, lane: 1, ...MUMBAI_TO_KOLKATA,
  bookedAt: T0 - 5 * HOUR, edd: T0 + 72 * HOUR, weightGrams: 1375, serviceType: 'surface',
});

const SANDBOX_ENDPOINT = { baseUrl: 'http://sandbox.test/delhivery', credentials: { token: 'sandbox' } };
const roundTrip = (shipment: SandboxShipment) => fetchAndNormalize(adapter, renderer, SANDBOX_ENDPOINT, shipment, T0 + 40 * HOUR);

const iso = (ms: number) => new Date(ms).toISOString();

describe('delhivery round trip through the sandbox renderer', () => {
  const everyKind = everyKindStory(step);
  const expected: Record<StepKind, EventCode | EventCode[]> = {
    booked: 'booked', picked_up: 'picked_up', hub_in: 'received', bagged: 'bagged', hub_out: 'dispatched',
    hold: 'exception',
    unmapped: 'unknown', out_for_delivery: 'out_for_delivery', attempt_failed: 'delivery_attempted',
    lost: 'exception', cancelled: 'exception', delivered: 'delivered',
    rto_initiated: 'rto_initiated', rto_in_transit: 'dispatched', rto_delivered: 'rto_delivered',
  };

  it('gives every step kind its event code at the right UTC instant', async () => {
    const { record } = await roundTrip(shipmentOf(everyKind));
    expect(record.events).toHaveLength(everyKind.length);
    expectStepEvents(record, everyKind.map((s) => [s, { code: expected[s.kind] }] as const));
    const attempt = record.events.find((e) => e.code === 'delivery_attempted');
    expect(attempt?.reason_code).toBe('refused');
  });

  it('keeps the carrier order (oldest first) and the header', async () => {
    const { parsed, record } = await roundTrip(shipmentOf(everyKind));
    expect(scanInstants(parsed.scans)).toEqual(everyKind.map((s) => s.at));
    expect(record.origin?.pincode).toBe('400001');
    expect(record.destination?.pincode).toBe('700001');
    expect(record.destination?.city).toBe('Kolkata');
    expect(record.estimated_delivery_at).toBe(iso(T0 + 72 * HOUR));
    expect(record.shipment.weight_grams).toBe(1375);
    expect(record.shipment.booked_at).toBe(iso(T0));
  });

  it('puts remarks (personal data included) into the native body for the shared redaction step', async () => {
    const { response } = await roundTrip(shipmentOf(everyKind));
    expect(response.body).toContain('9876543210');
    expect(response.body).toContain('priya.sharma@example.com');
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
    expect(record.insights.attention_reason).toBe('failed_attempt');
  });

  it('a hold keeps the shipment in transit and is no attempt', async () => {
    const { record } = await roundTrip(shipmentOf([step('booked', 0), step('picked_up', 2), step('hold', 5, { remark: 'Delayed due to cyclone warning', ndr: 'other' })]));
    expect(record.status).toBe('in_transit');
    expect(record.delivery_attempts.count).toBe(0);
    expect(record.events[0]!.code).not.toBe('delivery_attempted');
  });

  it.each<[string, string, string, StepKind[]]>([
    ['cancelled before pickup', 'cancelled', 'cancelled', ['booked', 'cancelled']],
    ['lost', 'exception', 'exception', ['booked', 'picked_up', 'lost']],
    ['delivered', 'delivered', 'delivered', ['booked', 'picked_up', 'out_for_delivery', 'delivered']],
    ['returned to origin', 'returned', 'rto_delivered', ['booked', 'picked_up', 'attempt_failed', 'rto_initiated', 'rto_in_transit', 'rto_delivered']],
    ['returning', 'returned', 'rto_in_transit', ['booked', 'picked_up', 'attempt_failed', 'rto_initiated']],
    ['awaiting pickup', 'awaiting_pickup', 'awaiting_pickup', ['booked']],
  ])('a story ending %s gives record status %s, stage %s', async (_name, status, stage, kinds) => {
    const steps = kinds.map((kind, i) => step(kind, i * 3, kind === 'attempt_failed' ? { ndr: 'customer_unavailable' } : {}));
    const { record } = await roundTrip(shipmentOf(steps));
    expect(record.status).toBe(status);
    expect(record.insights.current_stage).toBe(stage);
  });
});

describe('delhivery sandbox route', () => {
  const route = renderer.routes[0]!;
  const request = (headers: Record<string, string>, waybill: string = AWB) =>
    ({ method: 'GET', path: '/api/v1/packages/json/', query: { waybill }, headers, body: '' });
  const shipment = shipmentOf([step('booked', 0)]);

  it('answers 401 without or with a wrong token', () => {
    expect(route.handle(request({}), {}, () => ({ kind: 'shipment', shipment })).status).toBe(401);
    expect(route.handle(request({ authorization: 'Token nope' }), {}, () => ({ kind: 'shipment', shipment })).status).toBe(401);
  });

  it('renders not found, malformed and down the carrier way', () => {
    const auth = { authorization: 'Token sandbox' };
    const notFound = route.handle(request(auth), {}, () => ({ kind: 'not_found' }));
    expect(adapter.parse(AWB, { status: notFound.status, headers: {}, body: notFound.body })).toEqual({ outcome: 'not_found' });
    const malformed = route.handle(request(auth), {}, () => ({ kind: 'malformed' }));
    expect(malformed.status).toBe(200);
    expect(adapter.parse(AWB, { status: 200, headers: {}, body: malformed.body }).outcome).toBe('error');
    expect(route.handle(request(auth), {}, () => ({ kind: 'down' })).status).toBe(503);
  });

  it('asks the scenario engine about the waybill in the query', () => {
    const asked: string[] = [];
    route.handle(request({ authorization: 'Token sandbox' }, '1234567890219'), {}, (awb) => { asked.push(awb); return { kind: 'not_found' }; });
    expect(asked).toEqual(['1234567890219']);
  });
});
