/**
 * Shree Maruti's JSON API: bodies in its shape (fixtures/SOURCES.md; no full real body exists yet),
 * the login / refresh / tracking calls, errors that name the field, and the sandbox round trip.
 */
import { describe, expect, it } from 'vitest';
import { renderer, SANDBOX_ACCESS_TOKEN } from '../../sandbox/carriers/shreemaruti.ts';
import type { SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { requireAwb, type CarrierPoll } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { fetchAndNormalize, istAt, normalizeAnswer, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { sandboxSend } from '../../../test/support/carriers/sandbox-transport.ts';
import { eventAt, expectStepEvents, type StepEvent } from '../../../test/support/carriers/step-events.ts';
import { AHMEDABAD_TO_PUNE, FAILED_ATTEMPT_CASES, HOUR, shipmentBuilder, storyStep } from '../../../test/support/carriers/story.ts';
import type { HttpRequest, NativeResponse } from '../types.ts';
import { adapter } from './adapter.ts';

const DELIVERED = 'own-delivered-after-ndr.json';
const RTO = 'own-ndr-then-rto-delivered.json';
const CANCELLED = 'own-cancelled.json';
const utc = (iso: string) => new Date(iso).toISOString();

function recordOf(poll: CarrierPoll) {
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, '2026-11-23T06:30:00.000Z');
}

const jsonAnswer = (body: unknown, status = 200): NativeResponse => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('shreemaruti in its API shape: delivered on the second attempt', () => {
  it('reads statuses oldest first with their UTC times, remarks and places', async () => {
    const poll = await pollAnswer(adapter, '5012345678', fixtureResponse('shreemaruti', DELIVERED));
    expect(poll.scans.map((s) => s.raw_status)).toEqual([
      'NEW', 'READY_FOR_DISPATCH', 'IN_TRANSIT', 'IN_TRANSIT', 'IN_TRANSIT', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'UNDELIVERED', 'OUT_FOR_DELIVERY', 'DELIVERED',
    ]);
    expect(poll.scans[2]).toEqual({ occurred_at: '2026-11-14T12:05:11.000Z', raw_status: 'IN_TRANSIT', raw_code: null, remarks: 'Shipment picked up', location: 'Ahmedabad' });
    expect(poll.shipment).toEqual({
      origin: { city: 'Ahmedabad', state: 'Gujarat', pincode: '380001' },
      destination: { city: 'Pune', state: 'Maharashtra', pincode: '411001' },
      service_type: 'surface', weight_grams: 750, booked_at: '2026-11-14T05:12:40.512Z', estimated_delivery_at: '2026-11-19T23:59:59',
    });
    // Street addresses and phone numbers of the pickup and delivery details never leave the parser.
    expect(JSON.stringify(poll)).not.toMatch(/9812300000|9822200000|Shivaji Nagar|Ring Road|9890011122/);
  });

  it('is delivered on 17 Nov after a customer-unavailable attempt; every status mapped', async () => {
    const record = recordOf(await pollAnswer(adapter, '5012345678', fixtureResponse('shreemaruti', DELIVERED)));
    expect(record).toMatchObject({ status: 'delivered', is_delivered: true, delivered_at: utc('2026-11-17T07:42:19Z') });
    expect(record.delivery_attempts.attempts.map((a) => [a.at, a.outcome, a.reason_code])).toEqual([
      [utc('2026-11-16T10:20:00Z'), 'failed', 'customer_unavailable'], [utc('2026-11-17T07:42:19Z'), 'delivered', null],
    ]);
    expect(record.milestones).toMatchObject({ picked_up_at: utc('2026-11-14T12:05:11Z'), out_for_delivery_at: utc('2026-11-16T04:35:00Z') });
    expect(record.events.map((e) => e.code).reverse()).toEqual([
      'booked', 'booked', 'picked_up', 'received', 'dispatched', 'received', 'out_for_delivery', 'delivery_attempted', 'out_for_delivery', 'delivered',
    ]);
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });
});

describe('shreemaruti in its API shape: three attempts, then the return to the seller', () => {
  it('reads each attempt reason and follows RTO to RTO_DELIVERED', async () => {
    const record = recordOf(await pollAnswer(adapter, '5012345690', fixtureResponse('shreemaruti', RTO)));
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual(['address_issue', 'refused', 'premises_closed']);
    expect(record).toMatchObject({ status: 'returned', is_rto: true, is_delivered: false });
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.milestones).toMatchObject({ rto_initiated_at: utc('2026-11-06T13:00:00Z'), rto_delivered_at: utc('2026-11-09T08:05:00Z'), delivered_at: null });
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });
});

describe('shreemaruti in its API shape: cancelled before pickup', () => {
  it('is cancelled, never picked up', async () => {
    const record = recordOf(await pollAnswer(adapter, '5012345701', fixtureResponse('shreemaruti', CANCELLED)));
    expect([record.status, record.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
    expect(record.milestones.picked_up_at).toBeNull();
  });
});

describe('shreemaruti error bodies', () => {
  it('not found (HTTP 404 or status 404 in a 200) is not_found', async () => {
    expect((await pollAnswer(adapter, '5012345678', fixtureResponse('shreemaruti', 'own-not-found.json', 404))).outcome).toBe('not_found');
    expect((await pollAnswer(adapter, '5012345678', fixtureResponse('shreemaruti', 'own-not-found.json', 200))).outcome).toBe('not_found');
  });

  it('a refused token is an error poll that says credentials', async () => {
    const http401 = await pollAnswer(adapter, '5012345678', fixtureResponse('shreemaruti', 'own-401-invalid-token.json', 401));
    expect(http401.error).toBe('shreemaruti: credentials rejected (HTTP 401: Unauthorized)');
    const inside200 = await pollAnswer(adapter, '5012345678', fixtureResponse('shreemaruti', 'own-401-invalid-token.json', 200));
    expect(inside200.error).toBe('shreemaruti: credentials rejected (status 401: Unauthorized)');
  });

  it.each([
    ['a status without its text', (b: { data: { statuses: Record<string, unknown>[] } }) => { delete b.data.statuses[3]!.status; }, /^shreemaruti: unexpected JSON at data\.statuses\.3\.status$/],
    ['an unreadable timestamp', (b: { data: { statuses: Record<string, unknown>[] } }) => { b.data.statuses[5]!.timestamp = '16/11/2026'; }, /^shreemaruti: unreadable statuses\.5\.timestamp$/],
    ['no statuses at all', (b: { data: Record<string, unknown> }) => { delete b.data.statuses; }, /^shreemaruti: unexpected JSON at data\.statuses$/],
  ])('%s is an error naming Shree Maruti and the field', async (_name, edit, error) => {
    const body = JSON.parse(fixtureText('shreemaruti', DELIVERED)) as never;
    (edit as (b: never) => void)(body);
    const poll = await pollAnswer(adapter, '5012345678', jsonAnswer(body));
    expect(poll.outcome).toBe('error');
    expect(poll.error).toMatch(error);
  });

  it('ignores unknown fields anywhere', async () => {
    const body = JSON.parse(fixtureText('shreemaruti', DELIVERED)) as { data: { statuses: Record<string, unknown>[] } & Record<string, unknown> } & Record<string, unknown>;
    body.data.newThing = { nested: [1] };
    for (const s of body.data.statuses) Object.assign(s, { geo: { lat: 18.5, long: 73.8 }, version: 2 });
    const withExtras = await pollAnswer(adapter, '5012345678', jsonAnswer({ ...body, traceId: 'x' }));
    expect(withExtras.scans).toEqual((await pollAnswer(adapter, '5012345678', fixtureResponse('shreemaruti', DELIVERED))).scans);
  });

  it('an HTML error page, a 500 and another number\'s answer are errors', async () => {
    expect((await pollAnswer(adapter, '5012345678', { status: 200, headers: {}, body: '<html><body>502 Bad Gateway</body></html>' })).error).toBe('shreemaruti: HTML instead of JSON');
    expect((await pollAnswer(adapter, '5012345678', { status: 500, headers: {}, body: '{}' })).error).toBe('shreemaruti: HTTP 500');
    expect((await pollAnswer(adapter, '9999999999', fixtureResponse('shreemaruti', DELIVERED))).error).toMatch(/^shreemaruti: answer is for another awbNumber/);
  });

  it.each([DELIVERED, RTO, CANCELLED])('survives mutations of %s', (name) => {
    fuzzParser(adapter, '5012345678', fixtureResponse('shreemaruti', name), 600, name.length);
  });
});

// ---------------------------------------------------------------- login, refresh, tracking

describe('shreemaruti calls', () => {
  const route = (path: string) => renderer.routes.find((r) => r.path === path)!;

  it('logs in with email, password and vendorType SELLER, then tracks with the bearer token; the token is reused', async () => {
    const baseUrl = 'http://sandbox.test/shreemaruti-login';
    const sent: HttpRequest[] = [];
    const inner = sandboxSend(renderer, baseUrl, () => ({ kind: 'not_found' }));
    const send = async (req: HttpRequest) => { sent.push(req); return inner(req); };
    const endpoint = { baseUrl, credentials: { email: 'sandbox', password: 'sandbox' } };
    expect(adapter.parse(requireAwb('5012345678'), await adapter.fetch(requireAwb('5012345678'), endpoint, send))).toEqual({ outcome: 'not_found' });
    expect(sent.map((r) => [r.method, r.url])).toEqual([['POST', `${baseUrl}/auth/login`], ['GET', `${baseUrl}/tracking/v2/5012345678`]]);
    expect(JSON.parse(sent[0]!.body!)).toEqual({ email: 'sandbox', password: 'sandbox', vendorType: 'SELLER' });
    expect(sent[1]!.headers).toMatchObject({ Authorization: `Bearer ${SANDBOX_ACCESS_TOKEN}` });
    await adapter.fetch(requireAwb('5012345679'), endpoint, send);
    expect(sent).toHaveLength(3);
    expect(route('/auth/login').method).toBe('POST');
  });

  it('a refused token is refreshed with the refresh token, then tracking is asked again', async () => {
    const baseUrl = 'http://sandbox.test/shreemaruti-refresh';
    const sent: string[] = [];
    let expired = false;
    const inner = sandboxSend(renderer, baseUrl, () => ({ kind: 'not_found' }));
    const send = async (req: HttpRequest) => {
      sent.push(`${req.method} ${new URL(req.url).pathname}`);
      if (expired && req.url.includes('/tracking/')) { expired = false; return jsonAnswer({ status: 401, message: 'jwt expired' }, 401); }
      return inner(req);
    };
    const endpoint = { baseUrl, credentials: { email: 'sandbox', password: 'sandbox' } };
    await adapter.fetch(requireAwb('5012345678'), endpoint, send);
    expired = true;
    const response = await adapter.fetch(requireAwb('5012345678'), endpoint, send);
    expect(adapter.parse(requireAwb('5012345678'), response)).toEqual({ outcome: 'not_found' });
    expect(sent.slice(2)).toEqual(['GET /shreemaruti-refresh/tracking/v2/5012345678', 'GET /shreemaruti-refresh/auth/refresh-token', 'GET /shreemaruti-refresh/tracking/v2/5012345678']);
  });

  it('wrong credentials at login are an error poll that says credentials', async () => {
    const baseUrl = 'http://sandbox.test/shreemaruti-wrong';
    const send = sandboxSend(renderer, baseUrl, () => ({ kind: 'not_found' }));
    const response = await adapter.fetch(requireAwb('5012345678'), { baseUrl, credentials: { email: 'someone@example.com', password: 'nope' } }, send);
    expect(adapter.parse(requireAwb('5012345678'), response))
      .toEqual({ outcome: 'error', error: 'credentials rejected (HTTP 401: Invalid email or password)' });
  });
});

// ---------------------------------------------------------------- sandbox round trip

const AWB = requireAwb('5012340304');
const START = Date.UTC(2026, 10, 16, 3, 30);
const endpoint = { baseUrl: 'http://sandbox.test/shreemaruti', credentials: { email: 'sandbox', password: 'sandbox' } };
const step = (kind: StepKind, hour: number, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, START + hour * HOUR, location, extra);
const shipmentOf = shipmentBuilder({
  carrier: 'shreemaruti', awb: AWB, scenario: 4, lane: 3, ...AHMEDABAD_TO_PUNE,
  bookedAt: START, edd: START + 96 * HOUR, weightGrams: 500, serviceType: 'surface',
});
const roundTrip = (shipment: SandboxShipment) => fetchAndNormalize(adapter, renderer, endpoint, shipment, START + 200 * HOUR);

const FORWARD: [SandboxStep, StepEvent][] = [
  [step('booked', 0, 'Ahmedabad'), { code: 'booked', reason: null }],
  [step('picked_up', 5, 'Ahmedabad'), { code: 'picked_up', reason: null }],
  [step('hub_in', 8, 'Ahmedabad Hub'), { code: 'received', reason: null }],
  [step('bagged', 9, 'Ahmedabad Hub'), { code: 'bagged', reason: null }],
  [step('hub_out', 10, 'Ahmedabad Hub'), { code: 'dispatched', reason: null }],
  [step('hold', 16, 'Nashik', { remark: 'Held due to heavy rain', ndr: 'other' }), { code: 'exception', reason: 'other' }],
  [step('hub_in', 30, 'Pune Hub'), { code: 'received', reason: null }],
  [step('out_for_delivery', 33, 'Pune'), { code: 'out_for_delivery', reason: null }],
  [step('attempt_failed', 38, 'Pune', { ndr: 'premises_closed' }), { code: 'delivery_attempted', reason: 'premises_closed' }],
  [step('unmapped', 45, 'Pune'), { code: 'unknown', reason: null }],
  [step('out_for_delivery', 57, 'Pune'), { code: 'out_for_delivery', reason: null }],
  [step('delivered', 61, 'Pune'), { code: 'delivered', reason: null }],
];

describe('shreemaruti sandbox round trip', () => {
  it('maps every forward step to its event code at the right instant, with the header', async () => {
    const shipment = shipmentOf(FORWARD.map(([s]) => s));
    const { record } = await roundTrip(shipment);
    expectStepEvents(record, FORWARD);
    expect(record.status).toBe('delivered');
    expect(record.delivery_attempts.count).toBe(2);
    expect(eventAt(record, FORWARD[5]![0]).status).toBe('in_transit');
    expect(record.origin).toEqual({ office: null, ...AHMEDABAD_TO_PUNE.origin });
    expect(record.estimated_delivery_at).toBe('2026-11-20T18:29:59.000Z');
  });

  it.each(FAILED_ATTEMPT_CASES)('a failed attempt for %s (remark %s) gives that NDR reason', async (ndr, remark) => {
    const { record } = await roundTrip(shipmentOf([step('picked_up', 0, 'Ahmedabad'), step('out_for_delivery', 30, 'Pune'), step('attempt_failed', 34, 'Pune', { ndr, remark })]));
    expect(record.insights.current_stage).toBe('delivery_attempted');
    expect(record.delivery_attempts.attempts[0]).toMatchObject({ outcome: 'failed', reason_code: ndr });
  });

  it('maps the return journey, a cancellation and a loss', async () => {
    const steps = [
      step('picked_up', 0, 'Ahmedabad'), step('out_for_delivery', 30, 'Pune'), step('attempt_failed', 34, 'Pune', { ndr: 'refused' }),
      step('rto_initiated', 40, 'Pune'), step('rto_in_transit', 50, 'Nashik'), step('rto_delivered', 70, 'Ahmedabad'),
    ];
    const done = (await roundTrip(shipmentOf(steps))).record;
    expect([done.status, done.is_rto, done.insights.current_stage]).toEqual(['returned', true, 'rto_delivered']);
    expect(eventAt(done, steps[4]!).code).toBe('dispatched');
    const c = (await roundTrip(shipmentOf([step('booked', 0, 'Ahmedabad'), step('cancelled', 20, 'Ahmedabad')]))).record;
    expect([c.status, c.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
    const l = (await roundTrip(shipmentOf([step('picked_up', 0, 'Ahmedabad'), step('lost', 90, 'Nashik')]))).record;
    expect([l.status, l.insights.current_stage]).toEqual(['exception', 'exception']);
  });

  it('answers the failure scenarios the carrier\'s way', async () => {
    const reply = async (kind: 'not_found' | 'down' | 'malformed') =>
      adapter.parse(AWB, await adapter.fetch(AWB, endpoint, sandboxSend(renderer, endpoint.baseUrl, () => ({ kind }))));
    expect(await reply('not_found')).toEqual({ outcome: 'not_found' });
    expect(await reply('down')).toEqual({ outcome: 'error', error: 'HTTP 503' });
    expect((await reply('malformed')).outcome).toBe('error');
  });

  it('the sandbox writing the story of the delivered fixture gives the same record', async () => {
    const real = recordOf(await pollAnswer(adapter, '5012345678', fixtureResponse('shreemaruti', DELIVERED)));
    const at = (kind: StepKind, iso: string, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, Date.parse(iso), location, extra);
    const shipment: SandboxShipment = {
      carrier: 'shreemaruti', awb: '5012345678', scenario: 10, lane: 3, ...AHMEDABAD_TO_PUNE,
      bookedAt: Date.parse('2026-11-14T05:12:40.512Z'), edd: istAt('2026-11-19T12:00'), weightGrams: 750, serviceType: 'surface', shuffled: false,
      steps: [
        at('booked', '2026-11-14T05:12:40.512Z', 'Ahmedabad'),
        at('booked', '2026-11-14T09:30:00Z', 'Ahmedabad'),
        at('picked_up', '2026-11-14T12:05:11Z', 'Ahmedabad'),
        at('hub_in', '2026-11-14T16:40:00Z', 'Ahmedabad Hub'),
        at('hub_out', '2026-11-14T20:15:00Z', 'Ahmedabad Hub'),
        at('hub_in', '2026-11-16T03:50:00Z', 'Pune Hub'),
        at('out_for_delivery', '2026-11-16T04:35:00Z', 'Pune'),
        at('attempt_failed', '2026-11-16T10:20:00Z', 'Pune', { ndr: 'customer_unavailable' }),
        at('out_for_delivery', '2026-11-17T04:10:00Z', 'Pune'),
        at('delivered', '2026-11-17T07:42:19Z', 'Pune'),
      ],
    };
    const { record } = await fetchAndNormalize(adapter, renderer, endpoint, shipment, Date.parse('2026-11-23T06:30:00.000Z'));
    expect(storyOf(record)).toEqual(storyOf(real));
  });

  it('survives mutations of a sandbox answer', async () => {
    const { response } = await roundTrip(shipmentOf(FORWARD.map(([s]) => s)));
    fuzzParser(adapter, AWB, response, 1000, 7);
  });

  it('a hand-made answer with an IST time without offset reads as IST', () => {
    const body = { status: 200, data: { awbNumber: AWB, orderStatus: 'IN_TRANSIT', statuses: [{ status: 'IN_TRANSIT', remark: 'Shipment picked up', location: 'Pune', timestamp: '2026-11-16T09:00:00' }] } };
    const { parsed } = normalizeAnswer(adapter, AWB, jsonAnswer(body), START + HOUR);
    expect(parsed.scans[0]!.occurred_at).toBe('2026-11-16T09:00:00');
  });
});
