import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/bluedart.ts';
import { istParts, istToMs } from '../../sandbox/ist.ts';
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

const AWB = requireAwb('12345670104');
const xml = (body: string, status = 200): NativeResponse => ({ status, headers: { 'content-type': 'text/xml' }, body });

/**
 * Hand-written in Blue Dart's shape (carrier-formats.md): newest first, "01 June 2012" header dates,
 * "07-Jun-2012" scan dates, Instructions/ReceivedBy on the shipment, and a return as a second
 * <Shipment> under a new waybill number.
 */
const REAL_XML = `<?xml version="1.0" encoding="UTF-8"?>
<ShipmentData>
  <Shipment WaybillNo="50912345671" RefNo="ORD-8812">
    <Service>DOMESTIC PRIORITY</Service>
    <PickUpDate>01 June 2012</PickUpDate>
    <PickUpTime>1830</PickUpTime>
    <Origin>MUMBAI</Origin>
    <Destination>NEW DELHI</Destination>
    <ConsigneePincode>110001</ConsigneePincode>
    <ConsigneeTelNo>9876543210</ConsigneeTelNo>
    <ExpectedDeliveryDate>04 June 2012</ExpectedDeliveryDate>
    <Weight>0.75</Weight>
    <Status>RETURN TO SHIPPER</Status>
    <StatusType>RT</StatusType>
    <StatusDate>05 June 2012</StatusDate>
    <StatusTime>10:40</StatusTime>
    <ReceivedBy></ReceivedBy>
    <Instructions>CONSIGNEE REFUSED TO ACCEPT &amp; RETURN</Instructions>
    <Scans>
      <ScanDetail><Scan>RETURN TO SHIPPER</Scan><ScanCode>074</ScanCode><ScanType>RT</ScanType><ScanDate>05-Jun-2012</ScanDate><ScanTime>10:40</ScanTime><ScannedLocation>NEW DELHI</ScannedLocation></ScanDetail>
      <ScanDetail><Scan>CONSIGNEE NOT AVAILABLE;CANT DELIVER</Scan><ScanCode>025</ScanCode><ScanType>UD</ScanType><ScanDate>04-Jun-2012</ScanDate><ScanTime>16:10</ScanTime><ScannedLocation>NEW DELHI</ScannedLocation></ScanDetail>
      <ScanDetail><Scan>Shipment Outscan</Scan><ScanCode>005</ScanCode><ScanType>UD</ScanType><ScanDate>04-Jun-2012</ScanDate><ScanTime>09:05</ScanTime><ScannedLocation>NEW DELHI</ScannedLocation></ScanDetail>
      <ScanDetail><Scan>SHIPMENT OUTSCANNED TO NETWORK</Scan><ScanCode>004</ScanCode><ScanType>UD</ScanType><ScanDate>02-JUN-2012</ScanDate><ScanTime>01:15</ScanTime><ScannedLocation>MUMBAI HUB</ScannedLocation></ScanDetail>
      <ScanDetail><Scan>SHIPMENT INSCAN</Scan><ScanCode>001</ScanCode><ScanType>PU</ScanType><ScanDate>01-Jun-2012</ScanDate><ScanTime>19:02</ScanTime><ScannedLocation>MUMBAI</ScannedLocation></ScanDetail>
    </Scans>
  </Shipment>
  <Shipment WaybillNo="50999900012" RefNo="50912345671">
    <Service>DOMESTIC PRIORITY</Service>
    <PickUpDate>05 June 2012</PickUpDate>
    <Origin>NEW DELHI</Origin>
    <Destination>MUMBAI</Destination>
    <ConsigneePincode>400001</ConsigneePincode>
    <Status>DELIVERED BACK TO SHIPPER</Status>
    <StatusType>DL</StatusType>
    <StatusDate>07 June 2012</StatusDate>
    <StatusTime>13:05</StatusTime>
    <ReceivedBy>MR SHARMA</ReceivedBy>
    <Instructions/>
    <Scans>
      <ScanDetail><Scan>DELIVERED BACK TO SHIPPER</Scan><ScanCode>188</ScanCode><ScanType>RT</ScanType><ScanDate>07-Jun-2012</ScanDate><ScanTime>13:05</ScanTime><ScannedLocation>MUMBAI</ScannedLocation></ScanDetail>
      <ScanDetail><Scan>SHIPMENT OUTSCANNED TO NETWORK</Scan><ScanCode>004</ScanCode><ScanType>RT</ScanType><ScanDate>06-Jun-2012</ScanDate><ScanTime>22:30</ScanTime><ScannedLocation>NEW DELHI HUB</ScannedLocation></ScanDetail>
    </Scans>
  </Shipment>
</ShipmentData>`;

describe('bluedart parser on real-shaped answers', () => {
  const parsed = expectOk(adapter.parse(requireAwb('50912345671'), xml(REAL_XML)));

  it('reads both shipments (forward, then the return waybill) in the carrier order, newest first each', () => {
    expect(parsed.scans.map((s) => s.occurred_at)).toEqual([
      '2012-06-05T10:40:00', '2012-06-04T16:10:00', '2012-06-04T09:05:00', '2012-06-02T01:15:00', '2012-06-01T19:02:00',
      '2012-06-07T13:05:00', '2012-06-06T22:30:00',
    ]);
    expect(parsed.scans.map((s) => s.raw_code)).toEqual(['RT', 'UD', 'UD', 'UD', 'PU', 'RT', 'RT']);
  });

  it('gives each shipment\'s Instructions and ReceivedBy to its latest scan only', () => {
    expect(parsed.scans[0]!.remarks).toBe('CONSIGNEE REFUSED TO ACCEPT & RETURN');
    expect(parsed.scans[5]!.remarks).toBe('Received by: MR SHARMA');
    expect(parsed.scans.filter((s) => s.remarks !== null)).toHaveLength(2);
  });

  it('reads the forward shipment\'s header: dates, kg, service, consignee pincode', () => {
    expect(parsed.shipment).toEqual({
      origin: { city: 'MUMBAI', state: null, pincode: null },
      destination: { city: 'NEW DELHI', state: null, pincode: '110001' },
      service_type: 'express',
      weight_grams: 750,
      booked_at: '2012-06-01T18:30:00',
      estimated_delivery_at: '2012-06-04T23:59:59',
    });
    expect(JSON.stringify(parsed)).not.toContain('9876543210');
  });

  it('maps the journey through the product rules, the return waybill as the return leg', () => {
    const record = answer(makePoll({ carrier: 'bluedart', awb: '50912345671', scans: parsed.scans, shipment: parsed.shipment }), '2012-06-08T00:00:00Z');
    expect(record.events.map((e) => e.code).reverse()).toEqual([
      'picked_up', 'dispatched', 'out_for_delivery', 'delivery_attempted', 'rto_initiated', 'dispatched', 'rto_delivered',
    ]);
    expect(record.status).toBe('returned');
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.delivery_attempts.attempts[0]?.reason_code).toBe('customer_unavailable');
  });

  it('reads "Incorrect Waybill number or No Information" as not found', () => {
    const body = '<?xml version="1.0"?><ShipmentData><Shipment WaybillNo="12345670100"><StatusType>NF</StatusType>'
      + '<Status>Incorrect Waybill number or No Information</Status></Shipment></ShipmentData>';
    expect(adapter.parse(requireAwb('12345670100'), xml(body))).toEqual({ outcome: 'not_found' });
  });
});

describe('bluedart parser: broken answers', () => {
  it.each([
    ['truncated XML', xml('<?xml version="1.0"?><ShipmentData><Shipment WaybillNo="12345670104"><Scans><ScanDetail><Scan>SHIPMENT INSC')],
    ['an HTML error page', xml('<html><head><title>Error</title></head><body><h1>500 Internal Server Error</h1></body></html>')],
    ['an empty 200', xml('')],
    ['a 503', xml('Service Unavailable', 503)],
    ['a licence error', xml('<ShipmentData><Error>Invalid LoginID or License Key</Error></ShipmentData>', 200)],
    ['a scan with an impossible date', xml('<ShipmentData><Shipment WaybillNo="1"><Scans><ScanDetail><Scan>SHIPMENT INSCAN</Scan><ScanDate>31-Feb-2012</ScanDate><ScanTime>10:00</ScanTime></ScanDetail></Scans></Shipment></ShipmentData>')],
    ['a scan with an unknown month', xml('<ShipmentData><Shipment WaybillNo="1"><Scans><ScanDetail><Scan>SHIPMENT INSCAN</Scan><ScanDate>01-Foo-2012</ScanDate><ScanTime>10:00</ScanTime></ScanDetail></Scans></Shipment></ShipmentData>')],
    ['a scan without text', xml('<ShipmentData><Shipment WaybillNo="1"><Scans><ScanDetail><ScanDate>01-Jun-2012</ScanDate><ScanTime>10:00</ScanTime></ScanDetail></Scans></Shipment></ShipmentData>')],
    ['no Shipment at all', xml('<ShipmentData></ShipmentData>')],
  ])('gives an error outcome for %s', (_name, response) => {
    expect(adapter.parse(AWB, response).outcome).toBe('error');
  });

  it('survives 2000 mutations of a real answer', () => {
    fuzzParser(adapter, '50912345671', xml(REAL_XML), 2000);
  });
});

describe('bluedart fetch', () => {
  it('asks GET …/RoutingServlet with loginid and lickey in the query', async () => {
    const { sent, send } = recordingSend(() => xml('<ShipmentData/>'));
    await adapter.fetch(AWB, { baseUrl: 'https://api.bluedart.example', credentials: { loginid: 'BOM001', lickey: 'abc&123' } }, send);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.method).toBe('GET');
    const url = new URL(sent[0]!.url);
    expect(url.origin + url.pathname).toBe('https://api.bluedart.example/servlet/RoutingServlet');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      handler: 'tnt', action: 'custawbquery', loginid: 'BOM001', awb: 'awb', numbers: AWB, format: 'xml', lickey: 'abc&123', verno: '1.3', scan: '1',
    });
  });

  it('refuses to call without a licence key', async () => {
    await expect(adapter.fetch(AWB, { baseUrl: 'http://x', credentials: { loginid: 'a' } }, async () => xml(''))).rejects.toThrow(/lickey/);
  });
});

// ---- Round trip: sandbox renderer → HTTP shape → adapter → product normalization ----

const T0 = Date.UTC(2026, 10, 10, 3, 30); // 09:00 IST

const step = (kind: StepKind, hour: number, extra: Partial<SandboxStep> = {}) => storyStep(kind, T0 + hour * HOUR, 'Nagpur Central Hub', extra);

const shipmentOf = shipmentBuilder({
  carrier: 'bluedart', awb: AWB, scenario: 4, lane: 1, ...MUMBAI_TO_KOLKATA,
  bookedAt: T0 - 5 * HOUR, edd: T0 + 72 * HOUR, weightGrams: 1375, serviceType: 'express',
});

const SANDBOX_ENDPOINT = { baseUrl: 'http://sandbox.test/bluedart', credentials: { loginid: 'sandbox', lickey: 'sandbox' } };
const roundTrip = (shipment: SandboxShipment) => fetchAndNormalize(adapter, renderer, SANDBOX_ENDPOINT, shipment, T0 + 40 * HOUR);

const iso = (ms: number) => new Date(ms).toISOString();

describe('bluedart round trip through the sandbox renderer', () => {
  const everyKind = everyKindStory(step, { personalRemarks: false });
  const expected: Record<StepKind, EventCode | EventCode[]> = {
    // Blue Dart's manifest is a pre-pickup "bagged" (data received) scan in bluedart.yaml.
    booked: 'bagged', picked_up: 'picked_up', hub_in: 'received', bagged: 'bagged', hub_out: 'dispatched',
    hold: 'exception', cancelled: 'exception',
    unmapped: 'unknown', out_for_delivery: 'out_for_delivery', attempt_failed: 'delivery_attempted',
    lost: 'exception', delivered: 'delivered',
    rto_initiated: 'rto_initiated', rto_in_transit: 'dispatched', rto_delivered: 'rto_delivered',
  };

  it('gives every step kind its event code at the right UTC instant', async () => {
    const { record } = await roundTrip(shipmentOf(everyKind));
    expect(record.events).toHaveLength(everyKind.length);
    expectStepEvents(record, everyKind.map((s) => [s, { code: expected[s.kind] }] as const));
    expect(record.events.find((e) => e.code === 'delivery_attempted')?.reason_code).toBe('refused');
  });

  it('lists newest first, the return leg under its own waybill after the forward one, and keeps the header', async () => {
    const { parsed, record, response } = await roundTrip(shipmentOf(everyKind));
    const isReturn = (s: SandboxStep) => s.kind === 'rto_in_transit' || s.kind === 'rto_delivered';
    const newestFirst = (steps: SandboxStep[]) => steps.map((s) => s.at).sort((a, b) => b - a);
    expect(scanInstants(parsed.scans)).toEqual([
      ...newestFirst(everyKind.filter((s) => !isReturn(s))), ...newestFirst(everyKind.filter(isReturn)),
    ]);
    expect(response.body.match(/<Shipment /g)).toHaveLength(2);
    expect(record.origin?.pincode).toBe('400001');
    expect(record.destination?.pincode).toBe('700001');
    const edd = istParts(T0 + 72 * HOUR);
    expect(record.estimated_delivery_at).toBe(iso(istToMs(Number(edd.year), Number(edd.month), Number(edd.day), 23, 59, 59)));
    expect(record.shipment.weight_grams).toBe(1375);
    expect(record.shipment.service_type).toBe('express');
    expect(record.shipment.booked_at).toBe(iso(T0 - 5 * HOUR));
  });

  it('puts the latest remark (cut at 40 characters) into Instructions for the shared redaction step', async () => {
    const receiver = 'Delivered to Priya Sharma (+91 98765 43210) priya.sharma@example.com';
    const { response, parsed } = await roundTrip(shipmentOf([step('booked', 0), step('picked_up', 2), step('delivered', 9, { remark: receiver })]));
    expect(response.body).toContain(`<Instructions>${receiver.slice(0, 40)}</Instructions>`);
    expect(parsed.scans[0]!.remarks).toBe(receiver.slice(0, 40));
  });

  it('emits a shuffled story exactly in the given order', async () => {
    const shuffled = [step('hub_in', 6), step('booked', 0), step('hub_out', 9), step('picked_up', 2)];
    const { parsed, record } = await roundTrip(shipmentOf(shuffled, { shuffled: true }));
    expect(scanInstants(parsed.scans)).toEqual(shuffled.map((s) => s.at));
    expect(record.events.map((e) => e.code)).toEqual(['dispatched', 'received', 'picked_up', 'bagged']);
  });

  it('writes each failed-attempt reason so the product reads the same NDR reason back', async () => {
    const attempts = NDR_REASONS.map((ndr, i) => step('attempt_failed', 4 + i, { ndr, location: 'Kolkata' }));
    const { record } = await roundTrip(shipmentOf([step('booked', 0), step('picked_up', 2), ...attempts]));
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual<NdrReason[]>([...NDR_REASONS]);
    expect(record.status).toBe('exception');
  });

  it('keeps a failed attempt\'s long remark naming its reason after the 40-character cut', async () => {
    const { record } = await roundTrip(shipmentOf([step('booked', 0), step('picked_up', 2),
      step('attempt_failed', 5, { ndr: 'cod_not_ready', remark: 'Cash not ready, asked to come again' })]));
    expect(record.delivery_attempts.attempts[0]?.reason_code).toBe('cod_not_ready');
  });

  it('a hold keeps the shipment in transit and is no attempt', async () => {
    const { record } = await roundTrip(shipmentOf([step('booked', 0), step('picked_up', 2), step('hub_out', 3), step('hold', 5, { remark: 'Delayed due to cyclone warning', ndr: 'other' })]));
    expect(record.status).toBe('in_transit');
    expect(record.delivery_attempts.count).toBe(0);
  });

  it('a cancellation is never read as movement (bluedart.yaml has no cancel rule yet)', async () => {
    const { record } = await roundTrip(shipmentOf([step('booked', 0), step('cancelled', 5)]));
    expect(['exception', 'unknown']).toContain(record.events[0]!.code);
    expect(['cancelled', 'awaiting_pickup']).toContain(record.insights.current_stage);
  });

  it.each<[string, string, string, StepKind[]]>([
    ['lost', 'exception', 'exception', ['booked', 'picked_up', 'lost']],
    ['delivered', 'delivered', 'delivered', ['booked', 'picked_up', 'out_for_delivery', 'delivered']],
    ['returned to origin', 'returned', 'rto_delivered', ['booked', 'picked_up', 'attempt_failed', 'rto_initiated', 'rto_in_transit', 'rto_delivered']],
    ['returning', 'returned', 'rto_in_transit', ['booked', 'picked_up', 'attempt_failed', 'rto_initiated']],
    ['awaiting pickup', 'shipped', 'awaiting_pickup', ['booked']],
  ])('a story ending %s gives record status %s, stage %s', async (_name, status, stage, kinds) => {
    const steps = kinds.map((kind, i) => step(kind, i * 3, kind === 'attempt_failed' ? { ndr: 'customer_unavailable' } : {}));
    const { record } = await roundTrip(shipmentOf(steps));
    expect(record.status).toBe(status);
    expect(record.insights.current_stage).toBe(stage);
  });
});

describe('bluedart sandbox route', () => {
  const route = renderer.routes[0]!;
  const query = (extra: Record<string, string>) => ({ handler: 'tnt', action: 'custawbquery', awb: 'awb', numbers: AWB, format: 'xml', verno: '1.3', scan: '1', ...extra });
  const request = (q: Record<string, string>) => ({ method: 'GET', path: '/servlet/RoutingServlet', query: q, headers: {}, body: '' });
  const shipment = shipmentOf([step('booked', 0)]);

  it('answers 403 without or with wrong credentials', () => {
    expect(route.handle(request(query({})), {}, () => ({ kind: 'shipment', shipment })).status).toBe(403);
    expect(route.handle(request(query({ loginid: 'sandbox', lickey: 'nope' })), {}, () => ({ kind: 'shipment', shipment })).status).toBe(403);
  });

  it('renders not found, malformed and down the carrier way', () => {
    const q = query({ loginid: 'sandbox', lickey: 'sandbox' });
    const notFound = route.handle(request(q), {}, () => ({ kind: 'not_found' }));
    expect(adapter.parse(AWB, { status: notFound.status, headers: {}, body: notFound.body })).toEqual({ outcome: 'not_found' });
    const malformed = route.handle(request(q), {}, () => ({ kind: 'malformed' }));
    expect(malformed.status).toBe(200);
    expect(adapter.parse(AWB, { status: 200, headers: {}, body: malformed.body }).outcome).toBe('error');
    expect(route.handle(request(q), {}, () => ({ kind: 'down' })).status).toBe(503);
  });
});
