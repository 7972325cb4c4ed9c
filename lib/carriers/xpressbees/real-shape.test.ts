/** Xpressbees bodies in the documented shape with the texts real answers relay (fixtures/SOURCES.md). */
import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/xpressbees.ts';
import type { SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { fetchAndNormalize, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { adapter } from './adapter.ts';

const RTO = 'own-relayed-texts-ndr-rto.json';
const CANCELLED = 'own-cancelled.json';
const utc = (wall: string) => new Date(Date.parse(`${wall}:00+05:30`)).toISOString();

function recordOf(poll: CarrierPoll) {
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, '2026-11-23T06:30:00.000Z');
}

describe('xpressbees with real relayed texts: two attempts, then the return', () => {
  it('maps PickDone, the manifest inscan and the bag-out inscan; the bag id is a remark', async () => {
    const poll = await pollAnswer(adapter, '141123221084931', fixtureResponse('xpressbees', RTO));
    expect(poll.scans.find((s) => s.raw_status.startsWith('Reached at Destination'))).toMatchObject({ raw_status: 'Reached at Destination Shipment BagOut From Bag', remarks: 'nxbg03894488' });
    const record = recordOf(poll);
    expect(record.milestones.picked_up_at).toBe(utc('2026-11-10T15:47'));
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
    expect(record.events.map((e) => e.code).reverse().slice(0, 5)).toEqual(['booked', 'picked_up', 'received', 'dispatched', 'received']);
  });

  it('reads each attempt\'s reason and the return delivered', async () => {
    const record = recordOf(await pollAnswer(adapter, '141123221084931', fixtureResponse('xpressbees', RTO)));
    expect(record.delivery_attempts.attempts.map((a) => [a.at, a.reason_code])).toEqual([[utc('2026-11-15T18:02'), 'customer_unavailable'], [utc('2026-11-16T17:25'), 'refused']]);
    expect(record).toMatchObject({ status: 'returned', is_rto: true });
    expect(record.insights.current_stage).toBe('rto_delivered');
  });

  it('the delivery boy\'s phone number never leaves the poll', async () => {
    const poll = await pollAnswer(adapter, '141123221084931', fixtureResponse('xpressbees', RTO));
    expect(JSON.stringify(poll)).not.toMatch(/9415012345/);
  });

  it('a cancellation is cancelled', async () => {
    const record = recordOf(await pollAnswer(adapter, '141123221084940', fixtureResponse('xpressbees', CANCELLED)));
    expect([record.status, record.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
  });

  it('an entry without its message or time is an error naming Xpressbees and the field', async () => {
    const body = JSON.parse(fixtureText('xpressbees', RTO)) as { data: { history: Record<string, unknown>[] } };
    delete body.data.history[2]!.message;
    expect((await pollAnswer(adapter, '141123221084931', { status: 200, headers: {}, body: JSON.stringify(body) })).error).toBe('xpressbees: unreadable data.history.2.message');
    body.data.history[2]!.message = 'RTO Initiated';
    body.data.history[5]!.event_time = '15/11/2026 18:02';
    expect((await pollAnswer(adapter, '141123221084931', { status: 200, headers: {}, body: JSON.stringify(body) })).error).toBe('xpressbees: unreadable data.history.5.event_time');
  });

  it('a 401 says credentials; unknown fields are ignored', async () => {
    expect((await pollAnswer(adapter, '141123221084931', { status: 401, headers: {}, body: '{"status":false,"message":"Invalid token"}' })).error).toBe('xpressbees: credentials rejected (HTTP 401: Invalid token)');
    const body = JSON.parse(fixtureText('xpressbees', RTO)) as { data: { history: Record<string, unknown>[] } & Record<string, unknown> };
    body.data.new_field = [1];
    for (const h of body.data.history) h.lat_long = '26.8,80.9';
    const withExtras = await pollAnswer(adapter, '141123221084931', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(withExtras.scans).toEqual((await pollAnswer(adapter, '141123221084931', fixtureResponse('xpressbees', RTO))).scans);
  });

  it.each([RTO, CANCELLED])('survives mutations of %s', (name) => {
    fuzzParser(adapter, '141123221084931', fixtureResponse('xpressbees', name), 600, name.length);
  });
});

describe('xpressbees: the sandbox writing the relayed-texts story gives the same record', () => {
  it('same status, stage, events, attempts and milestones', async () => {
    const real = recordOf(await pollAnswer(adapter, '141123221084931', fixtureResponse('xpressbees', RTO)));
    const at = (kind: StepKind, wall: string, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, Date.parse(`${wall}:00+05:30`), location, extra);
    const shipment: SandboxShipment = {
      carrier: 'xpressbees', awb: '141123221084931', scenario: 13, lane: 4,
      origin: { city: 'Bhiwandi', state: 'Maharashtra', pincode: '421302' },
      destination: { city: 'Lucknow', state: 'Uttar Pradesh', pincode: '226001' },
      bookedAt: Date.parse('2026-11-10T10:05:00+05:30'), edd: Date.parse('2026-11-15T23:59:59+05:30'), weightGrams: 480, serviceType: 'surface', shuffled: false,
      steps: [
        at('booked', '2026-11-10T10:05', 'Mumbai'),
        at('picked_up', '2026-11-10T15:47', 'Mumbai'),
        at('hub_in', '2026-11-10T19:02', 'Bhiwandi'),
        at('hub_out', '2026-11-11T04:20', 'Bhiwandi'),
        at('hub_in', '2026-11-14T23:45', 'Lucknow'),
        at('out_for_delivery', '2026-11-15T09:30', 'Lucknow'),
        at('attempt_failed', '2026-11-15T18:02', 'Lucknow', { ndr: 'customer_unavailable' }),
        at('out_for_delivery', '2026-11-16T09:12', 'Lucknow'),
        at('attempt_failed', '2026-11-16T17:25', 'Lucknow', { ndr: 'refused' }),
        at('rto_initiated', '2026-11-17T12:00', 'Lucknow'),
        at('rto_in_transit', '2026-11-18T22:10', 'Lucknow'),
        at('rto_delivered', '2026-11-21T13:40', 'Bhiwandi'),
      ],
    };
    const endpoint = { baseUrl: 'http://sandbox.test/xpressbees', credentials: { token: 'sandbox' } };
    const { record, response } = await fetchAndNormalize(adapter, renderer, endpoint, shipment, Date.parse('2026-11-23T06:30:00.000Z'));
    expect(response.body).toContain('PickDone');
    expect(storyOf(record)).toEqual(storyOf(real));
  });
});
