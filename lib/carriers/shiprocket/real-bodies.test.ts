/**
 * Shiprocket's real bodies (fixtures/SOURCES.md, its public Postman collection) and bodies written
 * in their shape: what a person reading each body would say, through poll() → record.
 */
import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/shiprocket.ts';
import type { SandboxShipment, StepKind } from '../../sandbox/types.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { fetchAndNormalize, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import { adapter } from './adapter.ts';

const XB_DELIVERED = 'postman-doc-track-awb-delivered-xpressbees.json';
const DL_PICKED_UP = 'postman-doc-track-shipment-picked-up-delhivery.json';
const ORDER_ID = 'postman-doc-track-order-id.json';
const MULTI = 'postman-doc-track-awbs-multi.json';
const RTO = 'own-ndr-rto-delhivery.json';
const CANCELLED = 'own-cancelled.json';
const utc = (wall: string) => new Date(Date.parse(`${wall.replace(' ', 'T')}+05:30`)).toISOString();
const NOW = '2026-11-23T06:30:00.000Z';

function recordOf(poll: CarrierPoll) {
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, NOW);
}
const poll = (name: string, awb: string, status = 200) => pollAnswer(adapter, awb, fixtureResponse('shiprocket', name, status));

describe('shiprocket real body: delivered by Xpressbees (141123221084922)', () => {
  it('delivered 19 Jul 2022 11:37 IST; relayed Xpressbees texts map; sr-status "NA" falls back to the text', async () => {
    const record = recordOf(await poll(XB_DELIVERED, '141123221084922'));
    expect(record).toMatchObject({ status: 'delivered', is_delivered: true, delivered_at: utc('2022-07-19 11:37') });
    expect(record.events.map((e) => [e.timestamp, e.code]).reverse()).toEqual([
      [utc('2022-07-18 09:51'), 'booked'], [utc('2022-07-18 10:04'), 'booked'], [utc('2022-07-18 13:50'), 'picked_up'],
      [utc('2022-07-18 20:28'), 'received'], [utc('2022-07-18 21:02'), 'dispatched'], [utc('2022-07-19 07:33'), 'received'],
      [utc('2022-07-19 08:57'), 'out_for_delivery'], [utc('2022-07-19 11:37'), 'delivered'],
    ]);
    expect(record.milestones.picked_up_at).toBe(utc('2022-07-18 13:50'));
    expect(record.estimated_delivery_at).toBe(utc('2022-07-20 19:28'));
  });

  it('the agent\'s name and mobile in the out-for-delivery text never leave, nor the relayed codes as remarks', async () => {
    const polled = await poll(XB_DELIVERED, '141123221084922');
    const text = JSON.stringify(polled);
    expect(text).not.toMatch(/Nandinayani|Bhaskara|9963133564/);
    expect(polled.scans[1]!.raw_status).toBe('Out for Delivery Out for delivery: [redacted]');
    expect(polled.scans.map((s) => s.remarks)).toEqual(Array(8).fill(null));
    expect(polled.scans.map((s) => s.raw_code)).toEqual(['7', '17', '38', '18', '6', '42', '19', null]);
  });

  it('the sandbox writing the same story gives the same record', async () => {
    const real = recordOf(await poll(XB_DELIVERED, '141123221084922'));
    const at = (kind: StepKind, wall: string, location: string) => storyStep(kind, Date.parse(`${wall.replace(' ', 'T')}+05:30`), location);
    const shipment: SandboxShipment = {
      carrier: 'shiprocket', awb: '141123221084922', scenario: 4, lane: 6,
      origin: { city: 'Bengaluru', state: 'Karnataka', pincode: '560001' }, destination: { city: 'Chittoor', state: 'Andhra Pradesh', pincode: '517001' },
      bookedAt: Date.parse('2022-07-18T09:51:00+05:30'), edd: Date.parse('2022-07-20T19:28:00+05:30'), weightGrams: 300, serviceType: 'surface', shuffled: false,
      steps: [
        at('booked', '2022-07-18 09:51', 'Bangalore'), at('booked', '2022-07-18 10:04', 'Bangalore'), at('picked_up', '2022-07-18 13:50', 'Bangalore'),
        at('hub_in', '2022-07-18 20:28', 'BLR FC1'), at('hub_out', '2022-07-18 21:02', 'BLR FC1'), at('hub_in', '2022-07-19 07:33', 'Madanapalli'),
        at('out_for_delivery', '2022-07-19 08:57', 'Madanapalli'), at('delivered', '2022-07-19 11:37', 'Madanapalli'),
      ],
    };
    const endpoint = { baseUrl: 'http://sandbox.test/shiprocket', credentials: { email: 'sandbox', password: 'sandbox' } };
    const { record } = await fetchAndNormalize(adapter, renderer, endpoint, shipment, Date.parse(NOW));
    expect(storyOf(record)).toEqual(storyOf(real));
  });
});

describe('shiprocket real bodies: the other tracking calls', () => {
  it('by shipment id: picked up by Delhivery 23 Dec 2021 14:23 IST, relayed X-PPOM', async () => {
    const record = recordOf(await poll(DL_PICKED_UP, '1091188857722'));
    expect(record.status).toBe('picked_up');
    expect(record.insights.current_stage).toBe('in_transit');
    expect(record.events.map((e) => [e.timestamp, e.code])).toEqual([
      [utc('2021-12-23 14:23:18'), 'picked_up'], [utc('2021-12-23 14:19:37'), 'booked'], [utc('2021-12-23 14:19:34'), 'booked'],
    ]);
    expect(JSON.stringify(record)).not.toContain('Farida');
  });

  it('by order id (an array) says the same as by shipment id', async () => {
    const byOrder = recordOf(await poll(ORDER_ID, '1091188857722'));
    const byShipment = recordOf(await poll(DL_PICKED_UP, '1091188857722'));
    expect(storyOf(byOrder)).toEqual(storyOf(byShipment));
  });

  it('several AWBs keyed by number, 2019 data without sr-status: each AWB gets its own, booked', async () => {
    const second = recordOf(await poll(MULTI, '788830567028'));
    expect(second.events).toHaveLength(1);
    expect(second.events[0]).toMatchObject({ code: 'booked', timestamp: utc('2019-08-01 05:20:55') });
    expect(second.insights.current_stage).toBe('awaiting_pickup');
    const first = recordOf(await poll(MULTI, '788829354408'));
    expect(first.events[0]!.timestamp).toBe(utc('2019-08-01 02:05:05'));
    expect(JSON.stringify(first)).not.toContain('Naruto');
  });

  it.each<[string, number, CarrierPoll['outcome'], RegExp | null]>([
    ['postman-doc-track-awb-404-missing-fields.json', 404, 'not_found', null],
    ['postman-doc-track-awb-404-missing-fields.json', 200, 'not_found', null],
    ['postman-doc-track-awb-no-activities.json', 200, 'not_found', null],
    ['postman-doc-track-awbs-500-wrong-format.json', 200, 'error', /^shiprocket: carrier error 500: Invalid argument supplied for foreach\(\)$/],
    ['postman-doc-track-awbs-invalid-empty.json', 200, 'error', /^shiprocket: empty answer, no tracking_data$/],
  ])('%s (HTTP %i) is %s', async (name, status, outcome, error) => {
    const polled = await poll(name, '141123221084922', status);
    expect(polled.outcome).toBe(outcome);
    if (error) expect(polled.error).toMatch(error);
  });

  it('a 401 is an error that says credentials', async () => {
    const polled = await pollAnswer(adapter, '1091188857722', { status: 401, headers: {}, body: '{"message":"Token has expired","status_code":401}' });
    expect(polled.error).toBe('shiprocket: credentials rejected (HTTP 401: Token has expired)');
  });
});

describe('shiprocket in the real shape', () => {
  it('failed attempts (21) with the relayed reasons, then RTO initiated, in transit and delivered to the shipper', async () => {
    const record = recordOf(await poll(RTO, '1490812345612'));
    expect(record.delivery_attempts.attempts.map((a) => [a.at, a.reason_code])).toEqual([
      [utc('2025-10-03 19:02:13'), 'customer_unavailable'], [utc('2025-10-04 18:45:27'), 'premises_closed'],
    ]);
    expect(record).toMatchObject({ status: 'returned', is_rto: true });
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.milestones.rto_delivered_at).toBe(utc('2025-10-14 11:05'));
  });

  it('cancelled before dispatch (45) is cancelled', async () => {
    const record = recordOf(await poll(CANCELLED, '1490812345614'));
    expect(record.status).toBe('cancelled');
  });

  it('unknown fields are ignored; an activity without a date is an error naming Shiprocket and the field', async () => {
    const body = JSON.parse(fixtureText('shiprocket', XB_DELIVERED)) as { tracking_data: { shipment_track_activities: Record<string, unknown>[] } };
    for (const a of body.tracking_data.shipment_track_activities) a.courier_extra = { lat: 12.9 };
    expect((await pollAnswer(adapter, '141123221084922', { status: 200, headers: {}, body: JSON.stringify(body) })).scans).toHaveLength(8);
    delete body.tracking_data.shipment_track_activities[2]!.date;
    const broken = await pollAnswer(adapter, '141123221084922', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(broken.error).toBe('shiprocket: activity 3 has no readable date');
  });

  it.each([XB_DELIVERED, DL_PICKED_UP, ORDER_ID, MULTI, RTO, CANCELLED])('survives mutations of %s', (name) => {
    fuzzParser(adapter, '1091188857722', fixtureResponse('shiprocket', name), 400, name.length);
  });
});
