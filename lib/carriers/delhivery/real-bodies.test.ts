/**
 * Delhivery's real bodies (fixtures/SOURCES.md) and bodies written in their shape: what a person
 * reading each body would say, through poll() → redaction → normalization → record.
 */
import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/delhivery.ts';
import type { SandboxShipment, StepKind } from '../../sandbox/types.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { fetchAndNormalize, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import { adapter } from './adapter.ts';

const IN_TRANSIT = 'in-transit-bag-received-amritsar-2024.json';
const MANIFESTED = 'staging-manifested-dehradun-2024.json';
const RTO = 'own-ndr-then-rto-pending.json';
const POD = 'own-delivered-then-pod-scans.json';
const CANCELLED = 'own-cancelled.json';
const POLLED_AT = '2024-09-22T06:00:00.000Z';
/** `2024-09-21T14:31:48.752` IST → UTC ISO. */
const utc = (wall: string) => new Date(Date.parse(`${wall}+05:30`)).toISOString();

function recordOf(poll: CarrierPoll, now = POLLED_AT) {
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, now);
}

describe('delhivery real body: in transit, bag received at Jalandhar (26805710004126)', () => {
  it('reads nine scans with their fractions of a second, the numeric pincode and no personal data', async () => {
    const poll = await pollAnswer(adapter, '26805710004126', fixtureResponse('delhivery', IN_TRANSIT), POLLED_AT);
    expect(poll.scans.map((s) => s.occurred_at)).toEqual([
      '2024-09-21T14:31:48.752', '2024-09-21T14:36:53', '2024-09-21T18:10:52', '2024-09-21T18:11:04.124', '2024-09-21T18:20:25.57',
      '2024-09-21T18:35:35.178', '2024-09-22T05:16:32.215', '2024-09-22T09:15:20.86', '2024-09-22T09:25:10.124',
    ]);
    expect(poll.shipment).toMatchObject({
      origin: { city: 'Amritsar', state: 'Punjab', office: 'Amritsar_VerkaBypss_I' },
      destination: { city: 'Nakodar', state: 'Punjab', pincode: '144042' },
      estimated_delivery_at: '2024-09-24T23:59:59',
    });
    expect(JSON.stringify(poll)).not.toMatch(/ARJUN|MEHTA|JagdeepSingh/i);
  });

  it('is in transit: picked up 21 Sep 18:10 IST, bagged, on a trip, received at Jalandhar 22 Sep 09:25 IST', async () => {
    const record = recordOf(await pollAnswer(adapter, '26805710004126', fixtureResponse('delhivery', IN_TRANSIT), POLLED_AT));
    expect(record.status).toBe('in_transit');
    expect(record.insights).toMatchObject({ current_stage: 'in_transit', is_stuck: false });
    expect(record.milestones).toMatchObject({ booked_at: utc('2024-09-21T14:31:48.752'), picked_up_at: utc('2024-09-21T18:10:52') });
    expect(record.events.map((e) => e.code).reverse()).toEqual([
      'booked', 'booked', 'picked_up', 'dispatched', 'received', 'bagged', 'dispatched', 'received', 'received',
    ]);
    expect(record.events[0]).toMatchObject({ timestamp: utc('2024-09-22T09:25:10.124'), location: 'Jalandhar QajiMandi P (Punjab)' });
    expect(record.estimated_delivery_at).toBe(utc('2024-09-24T23:59:59'));
  });

  it('the sandbox writing the same story gives the same record', async () => {
    const real = recordOf(await pollAnswer(adapter, '26805710004126', fixtureResponse('delhivery', IN_TRANSIT), POLLED_AT));
    const at = (kind: StepKind, wall: string, location: string) => storyStep(kind, Date.parse(`${wall}+05:30`), location);
    const shipment: SandboxShipment = {
      carrier: 'delhivery', awb: '26805710004126', scenario: 2, lane: 0,
      origin: { city: 'Amritsar', state: 'Punjab', pincode: '143001' },
      destination: { city: 'Nakodar', state: 'Punjab', pincode: '144042' },
      bookedAt: Date.parse('2024-09-21T18:10:52+05:30'), edd: Date.parse('2024-09-24T23:59:59+05:30'), weightGrams: 500, serviceType: 'surface', shuffled: false,
      steps: [
        at('booked', '2024-09-21T14:31:48.752', 'Amritsar VerkaBypss I'),
        at('booked', '2024-09-21T14:36:53', 'Amritsar VerkaBypss I'),
        at('picked_up', '2024-09-21T18:10:52', 'Amritsar VerkaBypss I'),
        at('hub_out', '2024-09-21T18:11:04.124', 'Amritsar VerkaBypss I'),
        at('hub_in', '2024-09-21T18:20:25.570', 'Amritsar VerkaBypss I'),
        at('bagged', '2024-09-21T18:35:35.178', 'Amritsar VerkaBypss I'),
        at('hub_out', '2024-09-22T05:16:32.215', 'Amritsar VerkaBypss I'),
        at('hub_in', '2024-09-22T09:15:20.860', 'Jalandhar QajiMandi P'),
        at('hub_in', '2024-09-22T09:25:10.124', 'Jalandhar QajiMandi P'),
      ],
    };
    const { record } = await fetchAndNormalize(adapter, renderer, { baseUrl: 'http://sandbox.test/delhivery', credentials: { token: 'sandbox' } }, shipment, Date.parse(POLLED_AT));
    expect(storyOf(record)).toEqual(storyOf(real));
  });
});

describe('delhivery real body: staging, manifested (84108410000151)', () => {
  it('is booked, awaiting pickup since 19 Nov 2024 22:51 IST, with the consignee pincode only', async () => {
    const poll = await pollAnswer(adapter, '84108410000151', fixtureResponse('delhivery', MANIFESTED), '2024-11-20T06:00:00.000Z');
    expect(poll.shipment?.destination).toEqual({ city: null, state: null, pincode: '208016' });
    const record = recordOf(poll, '2024-11-20T06:00:00.000Z');
    expect(record.status).toBe('awaiting_pickup');
    expect(record.insights.current_stage).toBe('awaiting_pickup');
    expect(record.events).toHaveLength(1);
    expect(record.events[0]).toMatchObject({ code: 'booked', timestamp: utc('2024-11-19T22:51:30.446') });
    expect(JSON.stringify(poll)).not.toContain('Rohan');
  });
});

describe('delhivery in the real shape', () => {
  it('"Pending" after an out-for-delivery is a failed attempt with its NSL reason; "Pending" / RT is the return travelling', async () => {
    const poll = await pollAnswer(adapter, '1490812345612', fixtureResponse('delhivery', RTO), '2025-10-08T06:00:00.000Z');
    expect(JSON.stringify(poll)).not.toMatch(/KAVYA|9812345678|Lotus|18\.5074/);
    const record = recordOf(poll, '2025-10-08T06:00:00.000Z');
    expect(record.delivery_attempts.attempts.map((a) => [a.at, a.reason_code])).toEqual([
      [utc('2025-10-03T19:02:13'), 'customer_unavailable'], [utc('2025-10-04T18:45:27.4'), 'premises_closed'],
    ]);
    expect(record).toMatchObject({ status: 'returned', is_rto: true });
    expect(record.insights.current_stage).toBe('rto_in_transit');
    expect(record.milestones.rto_initiated_at).toBe(utc('2025-10-06T11:00:00'));
    expect(record.events.slice(0, 3).map((e) => [e.code, e.status])).toEqual([['dispatched', 'returned'], ['dispatched', 'returned'], ['rto_initiated', 'returned']]);
  });

  it('POD scans after the delivery are no second delivery and do not reopen it', async () => {
    const record = recordOf(await pollAnswer(adapter, '1490812345613', fixtureResponse('delhivery', POD), '2025-10-06T06:00:00.000Z'), '2025-10-06T06:00:00.000Z');
    expect(record).toMatchObject({ status: 'delivered', is_delivered: true, delivered_at: utc('2025-10-03T14:31:08.9') });
    expect(record.delivery_attempts.count).toBe(1);
    expect(record.events.slice(0, 2).map((e) => [e.code, e.status])).toEqual([['received', 'delivered'], ['received', 'delivered']]);
  });

  it('a cancelled order is cancelled, terminal', async () => {
    const record = recordOf(await pollAnswer(adapter, '1490812345614', fixtureResponse('delhivery', CANCELLED), '2025-10-06T06:00:00.000Z'), '2025-10-06T06:00:00.000Z');
    expect(record.status).toBe('cancelled');
    expect(record.insights.current_stage).toBe('cancelled');
  });

  it('"No such waybill or Order Id found" is not found', async () => {
    expect((await pollAnswer(adapter, '1490812345699', fixtureResponse('delhivery', 'own-not-found.json'))).outcome).toBe('not_found');
  });

  it('a 401 is an error that says credentials', async () => {
    const poll = await pollAnswer(adapter, '1490812345699', { status: 401, headers: {}, body: '{"detail":"Invalid token."}' });
    expect(poll.error).toBe('delhivery: credentials rejected (HTTP 401: Invalid token.)');
  });

  it('ignores unknown fields; a scan without a time is an error naming Delhivery and the field', async () => {
    const body = JSON.parse(fixtureText('delhivery', IN_TRANSIT)) as { ShipmentData: { Shipment: { Scans: { ScanDetail: Record<string, unknown> }[] } }[] };
    const scans = body.ShipmentData[0]!.Shipment.Scans;
    for (const s of scans) Object.assign(s.ScanDetail, { call_duration: 17, geo_location: { lat: 31.2, long: 75.1 }, NewField: [1] });
    const extra = await pollAnswer(adapter, '26805710004126', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(extra.scans).toHaveLength(9);
    delete scans[2]!.ScanDetail.ScanDateTime;
    delete scans[2]!.ScanDetail.StatusDateTime;
    const broken = await pollAnswer(adapter, '26805710004126', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(broken.error).toBe('delhivery: scan 3 has no readable ScanDateTime');
  });

  it.each([IN_TRANSIT, MANIFESTED, RTO, POD])('survives mutations of %s', (name) => {
    fuzzParser(adapter, '26805710004126', fixtureResponse('delhivery', name), 500, name.length);
  });
});
