/** Blue Dart's real bodies (fixtures/SOURCES.md): what a person reading each would say, through poll() → record. */
import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/bluedart.ts';
import type { SandboxShipment, StepKind } from '../../sandbox/types.ts';
import { requireAwb } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { recordingSend } from '../../../test/support/carriers/recording-send.ts';
import { fetchAndNormalize, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { sandboxSend } from '../../../test/support/carriers/sandbox-transport.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import type { HttpRequest, NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';

const DELIVERED = 'legacy-routingservlet-xml-delivered-44330038841-2012.xml';
const utc = (wall: string) => new Date(Date.parse(`${wall}:00+05:30`)).toISOString();

describe('bluedart real body: RoutingServlet XML, delivered in Srinagar (44330038841)', () => {
  it('delivered 7 Jun 2012 13:05 IST after an outscan at 11:38; Navi Mumbai to Srinagar via Mumbai and Delhi hubs', async () => {
    const poll = await pollAnswer(adapter, '44330038841', fixtureResponse('bluedart', DELIVERED, 200, 'application/xml'));
    expect(poll.outcome, poll.error ?? '').toBe('ok');
    expect(JSON.stringify(poll)).not.toMatch(/RUQSANA|FAROOQ|9812345678|SHAKTI COLONY/);
    const record = answer(poll, '2012-06-08T00:00:00.000Z');
    expect(record).toMatchObject({ status: 'delivered', is_delivered: true, delivered_at: utc('2012-06-07T13:05') });
    expect(record.milestones).toMatchObject({ picked_up_at: utc('2012-06-01T21:23'), out_for_delivery_at: utc('2012-06-07T11:38') });
    expect(record.events.map((e) => [e.timestamp, e.code])).toEqual([
      [utc('2012-06-07T13:05'), 'delivered'], [utc('2012-06-07T11:38'), 'out_for_delivery'], [utc('2012-06-05T17:09'), 'picked_up'],
      [utc('2012-06-03T07:00'), 'dispatched'], [utc('2012-06-02T06:52'), 'bagged'], [utc('2012-06-02T05:12'), 'dispatched'],
      [utc('2012-06-02T02:38'), 'bagged'], [utc('2012-06-02T00:00'), 'dispatched'], [utc('2012-06-01T21:23'), 'picked_up'],
    ]);
    expect(record.delivery_attempts.count).toBe(1);
    expect(record.destination).toMatchObject({ city: 'SRINAGAR', pincode: '190008' });
  });

  it('survives mutations of the XML', () => {
    fuzzParser(adapter, '44330038841', fixtureResponse('bluedart', DELIVERED, 200, 'application/xml'), 600, 7);
  });
});

describe('bluedart real body: API gateway "License Mismatch"', () => {
  it('is an error poll that says the credentials (licence key) were rejected', async () => {
    const poll = await pollAnswer(adapter, '44330038841', fixtureResponse('bluedart', 'apigateway-tracking-error-license-mismatch.json'));
    expect(poll).toMatchObject({ outcome: 'error', scans: [] });
    expect(poll.error).toBe('bluedart: credentials rejected (ShipmentData.Error: License Mismatch)');
  });
});

describe('bluedart real body: the sandbox writing the same story gives the same record', () => {
  it.each([
    ['the legacy servlet (XML)', { loginid: 'sandbox', lickey: 'sandbox' }],
    ['the API gateway (JSON)', { loginid: 'sandbox', lickey: 'sandbox', clientid: 'sandbox', clientsecret: 'sandbox' }],
  ])('through %s', async (_way, credentials) => {
    const poll = await pollAnswer(adapter, '44330038841', fixtureResponse('bluedart', DELIVERED, 200, 'application/xml'));
    const real = answer(poll, '2012-06-08T00:00:00.000Z');
    const at = (kind: StepKind, wall: string, location: string) => storyStep(kind, Date.parse(`${wall}:00+05:30`), location);
    const shipment: SandboxShipment = {
      carrier: 'bluedart', awb: '44330038841', scenario: 4, lane: 0,
      origin: { city: 'Navimumbai', state: 'Maharashtra', pincode: '400703' },
      destination: { city: 'Srinagar', state: 'Jammu and Kashmir', pincode: '190008' },
      bookedAt: Date.parse('2012-06-01T00:00:00+05:30'), edd: null, weightGrams: 1500, serviceType: 'express', shuffled: false,
      steps: [
        at('picked_up', '2012-06-01T21:23', 'Ovali Warehouse'),
        at('hub_out', '2012-06-02T00:00', 'Ovali Warehouse'),
        at('bagged', '2012-06-02T02:38', 'Mumbai Hub'),
        at('hub_out', '2012-06-02T05:12', 'Mumbai Hub'),
        at('bagged', '2012-06-02T06:52', 'Delhi Hub'),
        at('hub_out', '2012-06-03T07:00', 'Delhi Hub'),
        at('picked_up', '2012-06-05T17:09', 'Srinagar'),
        at('out_for_delivery', '2012-06-07T11:38', 'Srinagar'),
        at('delivered', '2012-06-07T13:05', 'Srinagar'),
      ],
    };
    const endpoint = { baseUrl: 'http://sandbox.test/bluedart', credentials };
    const { record } = await fetchAndNormalize(adapter, renderer, endpoint, shipment, Date.parse('2012-06-08T00:00:00.000Z'));
    expect(storyOf(record)).toEqual(storyOf(real));
  });
});

describe('bluedart in the gateway shape: two attempts, then a return under a new waybill delivered to the shipper', () => {
  const RETURN = 'own-gateway-ndr-then-return-new-waybill.json';

  it('reads both waybills; the return waybill\'s ordinary delivery is the return delivered', async () => {
    const poll = await pollAnswer(adapter, '90412345671', fixtureResponse('bluedart', RETURN));
    expect(poll.outcome, poll.error ?? '').toBe('ok');
    expect(poll.scans).toHaveLength(11);
    expect(JSON.stringify(poll)).not.toMatch(/ANIL GHOSH|9830000000|LAKE ROAD/);
    const record = answer(poll, '2026-11-23T06:30:00.000Z');
    const ist = (wall: string) => new Date(Date.parse(`${wall}:00+05:30`)).toISOString();
    expect(record.delivery_attempts.attempts.map((a) => [a.at, a.reason_code])).toEqual([
      [ist('2026-11-13T14:45'), 'customer_unavailable'], [ist('2026-11-14T15:20'), 'refused'],
    ]);
    expect(record).toMatchObject({ status: 'returned', is_rto: true, is_delivered: false });
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.milestones).toMatchObject({ picked_up_at: ist('2026-11-10T18:15'), rto_initiated_at: ist('2026-11-15T10:10'), rto_delivered_at: ist('2026-11-19T12:40'), delivered_at: null });
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('when the answer only names the new waybill, both numbers are asked in one more call', async () => {
    const body = JSON.parse(fixtureText('bluedart', RETURN)) as { ShipmentData: { Shipment: unknown[] } };
    const forwardOnly = JSON.stringify({ ShipmentData: { Shipment: [body.ShipmentData.Shipment[0]] } });
    const asked: string[] = [];
    const send = async (req: HttpRequest): Promise<NativeResponse> => {
      const url = new URL(req.url);
      if (url.pathname.endsWith('/login')) return { status: 200, headers: {}, body: '{"JWTToken":"a.b.c"}' };
      asked.push(url.searchParams.get('numbers')!);
      return { status: 200, headers: {}, body: url.searchParams.get('numbers')!.includes(',') ? fixtureText('bluedart', RETURN) : forwardOnly };
    };
    const endpoint = { baseUrl: 'https://gateway.example', credentials: { loginid: 'L', lickey: 'K', clientid: 'C', clientsecret: 'S' } };
    const response = await adapter.fetch(requireAwb('90412345671'), endpoint, send);
    expect(asked).toEqual(['90412345671', '90412345671,90412399901']);
    expect(adapter.parse(requireAwb('90412345671'), response)).toMatchObject({ outcome: 'ok' });
  });
});

describe('bluedart in the servlet shape: cancelled by the shipper', () => {
  it('is cancelled before it moved', async () => {
    const poll = await pollAnswer(adapter, '90412345682', fixtureResponse('bluedart', 'own-servlet-cancelled.xml', 200, 'application/xml'));
    const record = answer(poll, '2026-11-23T06:30:00.000Z');
    expect([record.status, record.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
    expect(record.milestones.picked_up_at).toBeNull();
  });
});

describe('bluedart API gateway calls', () => {
  it('logs in with ClientID and clientSecret, tracks with the JWTToken header and reuses the token', async () => {
    const { sent, send } = recordingSend((req) => (req.url.includes('/login')
      ? { status: 200, headers: {}, body: JSON.stringify({ JWTToken: 'eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDB9.sig' }) }
      : { status: 200, headers: {}, body: '{"ShipmentData":{"Error":"No Information"}}' }));
    const endpoint = { baseUrl: 'https://gw-login.example', credentials: { loginid: 'BOM001', lickey: 'TRACKKEY', clientid: 'CID', clientsecret: 'SECRET' } };
    await adapter.fetch(requireAwb('44330038841'), endpoint, send);
    await adapter.fetch(requireAwb('44330038842'), endpoint, send);
    expect(sent.map((r) => new URL(r.url).pathname)).toEqual(['/in/transportation/token/v1/login', '/in/transportation/tracking/v1', '/in/transportation/tracking/v1']);
    expect(sent[0]!.headers).toMatchObject({ ClientID: 'CID', clientSecret: 'SECRET' });
    expect(sent[1]!.headers).toMatchObject({ JWTToken: 'eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDB9.sig' });
    expect(Object.fromEntries(new URL(sent[1]!.url).searchParams)).toMatchObject({ loginid: 'BOM001', lickey: 'TRACKKEY', numbers: '44330038841', format: 'json' });
  });

  it('a refused gateway login is an error poll that says credentials', async () => {
    const endpoint = { baseUrl: 'http://sandbox.test/bluedart', credentials: { loginid: 'sandbox', lickey: 'sandbox', clientid: 'unknown-client', clientsecret: 'wrong' } };
    const response = await adapter.fetch(requireAwb('44330038841'), endpoint, sandboxSend(renderer, endpoint.baseUrl, () => ({ kind: 'not_found' })));
    expect(adapter.parse(requireAwb('44330038841'), response)).toEqual({ outcome: 'error', error: 'credentials rejected (HTTP 401: Unauthorized)' });
  });

  it('a wrong tracking licence key is the gateway\'s License Mismatch, a credentials error', async () => {
    const endpoint = { baseUrl: 'http://sandbox.test/bluedart', credentials: { loginid: 'sandbox', lickey: 'shipping-key', clientid: 'sandbox', clientsecret: 'sandbox' } };
    const response = await adapter.fetch(requireAwb('44330038841'), endpoint, sandboxSend(renderer, endpoint.baseUrl, () => ({ kind: 'not_found' })));
    expect(response.body).toBe(fixtureText('bluedart', 'apigateway-tracking-error-license-mismatch.json').trim());
    expect(adapter.parse(requireAwb('44330038841'), response))
      .toEqual({ outcome: 'error', error: 'credentials rejected (ShipmentData.Error: License Mismatch)' });
  });

  it('an unknown number through the gateway is not_found', async () => {
    const endpoint = { baseUrl: 'http://sandbox.test/bluedart', credentials: { loginid: 'sandbox', lickey: 'sandbox', clientid: 'sandbox', clientsecret: 'sandbox' } };
    const response = await adapter.fetch(requireAwb('44330038841'), endpoint, sandboxSend(renderer, endpoint.baseUrl, () => ({ kind: 'not_found' })));
    expect(adapter.parse(requireAwb('44330038841'), response)).toEqual({ outcome: 'not_found' });
  });
});

describe('bluedart parser on the real shapes', () => {
  it('ignores unknown fields (gateway JSON and servlet XML)', async () => {
    const RETURN = 'own-gateway-ndr-then-return-new-waybill.json';
    const body = JSON.parse(fixtureText('bluedart', RETURN)) as { ShipmentData: { Shipment: Record<string, unknown>[] } };
    for (const s of body.ShipmentData.Shipment) Object.assign(s, { DynamicExpectedDeliveryDate: '20 November 2026', Latitude: 22.5, Extra: { a: [1] } });
    const plain = await pollAnswer(adapter, '90412345671', fixtureResponse('bluedart', RETURN));
    expect((await pollAnswer(adapter, '90412345671', { status: 200, headers: {}, body: JSON.stringify(body) })).scans).toEqual(plain.scans);
    const xmlBody = fixtureText('bluedart', DELIVERED).replace(/<ScanType>/g, '<ScanGroupType>S</ScanGroupType><ScannedLocationCode>SXR</ScannedLocationCode><ScanType>');
    const servletPlain = await pollAnswer(adapter, '44330038841', fixtureResponse('bluedart', DELIVERED, 200, 'application/xml'));
    expect((await pollAnswer(adapter, '44330038841', { status: 200, headers: {}, body: xmlBody })).scans).toEqual(servletPlain.scans);
  });

  it.each([
    ['a scan without its text (gateway)', (b: string) => b.replace('"Scan":"SHIPMENT INSCAN","ScanGroupType":"S","ScanType":"PU"', '"ScanGroupType":"S","ScanType":"PU"'), /^bluedart: unexpected JSON at ShipmentData\.Shipment\.0\.Scans\.ScanDetail\.7\.Scan$/],
    ['an unreadable scan date (gateway)', (b: string) => b.replace('"ScanDate":"12-Nov-2026"', '"ScanDate":"2026-11-12"'), /^bluedart: scan 6 has no readable ScanDate\/ScanTime$/],
    ['a ShipmentData without shipments or error', () => '{"ShipmentData":{}}', /^bluedart: unexpected JSON: no ShipmentData\.Shipment or ShipmentData\.Error$/],
  ])('%s is an error naming Blue Dart and the field', async (_name, edit, error) => {
    const poll = await pollAnswer(adapter, '90412345671', { status: 200, headers: {}, body: edit(fixtureText('bluedart', 'own-gateway-ndr-then-return-new-waybill.json')) });
    expect(poll.outcome).toBe('error');
    expect(poll.error).toMatch(error);
  });

  it.each(['own-gateway-ndr-then-return-new-waybill.json', 'own-servlet-cancelled.xml'])('survives mutations of %s', (name) => {
    fuzzParser(adapter, '90412345671', fixtureResponse('bluedart', name), 600, name.length);
  });
});
