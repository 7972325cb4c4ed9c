/** Speed Post and India Post bodies written in the feed's real shape (fixtures/SOURCES.md). */
import { describe, expect, it } from 'vitest';
import { adapter as indiapost } from '../indiapost/adapter.ts';
import { renderer } from '../../sandbox/carriers/speedpost.ts';
import type { SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import { fetchAndNormalize, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { adapter } from './adapter.ts';

const RTO = 'own-JH-ndr-then-rto.json';
const utc = (wall: string) => new Date(Date.parse(`${wall}+05:30`)).toISOString();

function recordOf(poll: CarrierPoll) {
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, '2026-11-23T06:30:00.000Z');
}

describe('speedpost in the real shape: a JH… article, two attempts, returned to the sender', () => {
  it('moves trailing bag ids into the remarks and reads the glued booking label', async () => {
    const poll = await pollAnswer(adapter, 'JH123456789IN', fixtureResponse('speedpost', RTO));
    expect(poll.scans.map((s) => s.raw_status)).toContain('Item Dispatched');
    expect(poll.scans.find((s) => s.raw_status === 'Item Bagged')?.remarks).toBe('PO24504112000');
    expect(poll.scans.at(-1)).toMatchObject({ raw_status: 'Item Book', remarks: 'Item Book At Dhule Jaihind Colony S.O', occurred_at: '2025-08-13T15:31:52' });
    expect(JSON.stringify(poll)).not.toMatch(/Sunita|9822011111/);
  });

  it('reads the attempts\' reasons and the return delivered to the sender', async () => {
    const record = recordOf(await pollAnswer(adapter, 'JH123456789IN', fixtureResponse('speedpost', RTO)));
    expect(record.delivery_attempts.attempts.map((a) => [a.at, a.reason_code])).toEqual([
      [utc('2025-08-16T17:40:00'), 'customer_unavailable'], [utc('2025-08-18T16:20:40'), 'premises_closed'],
    ]);
    expect(record).toMatchObject({ status: 'returned', is_rto: true });
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.milestones).toMatchObject({ picked_up_at: utc('2025-08-13T15:31:52'), rto_initiated_at: utc('2025-08-19T09:15:00'), rto_delivered_at: utc('2025-08-22T12:10:05') });
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('an event without its text or time is an error naming Speed Post and the field', async () => {
    const body = JSON.parse(fixtureText('speedpost', RTO)) as { data: { tracking_details: Record<string, unknown>[] }[] };
    delete body.data[0]!.tracking_details[4]!.event;
    const noEvent = await pollAnswer(adapter, 'JH123456789IN', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(noEvent.error).toBe('speedpost: unreadable data.0.tracking_details.4.event');
    body.data[0]!.tracking_details[4]!.event = 'Item Received';
    body.data[0]!.tracking_details[2]!.time = '25:99';
    const badTime = await pollAnswer(adapter, 'JH123456789IN', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(badTime.error).toBe('speedpost: unreadable data.0.tracking_details.2.date/time');
  });

  it('a refused token is an error poll that says credentials; a 404 is not found', async () => {
    const refused = await pollAnswer(adapter, 'JH123456789IN', { status: 401, headers: {}, body: '{"status_code":401,"success":false,"message":"Token expired"}' });
    expect(refused.error).toBe('speedpost: credentials rejected (HTTP 401: Token expired)');
    expect((await pollAnswer(adapter, 'JH123456789IN', { status: 404, headers: {}, body: '{"success":false,"message":"Article not found"}' })).outcome).toBe('not_found');
  });

  it('ignores unknown fields', async () => {
    const body = JSON.parse(fixtureText('speedpost', RTO)) as { data: { tracking_details: Record<string, unknown>[] }[] } & Record<string, unknown>;
    for (const d of body.data[0]!.tracking_details) d.event_code = 'IBK';
    body.meta = { version: 3 };
    const withExtras = await pollAnswer(adapter, 'JH123456789IN', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(withExtras.scans).toEqual((await pollAnswer(adapter, 'JH123456789IN', fixtureResponse('speedpost', RTO))).scans);
  });

  it('survives mutations', () => {
    fuzzParser(adapter, 'JH123456789IN', fixtureResponse('speedpost', RTO), 600, 3);
  });
});

describe('indiapost in the real shape: cancelled at the counter', () => {
  it('is cancelled', async () => {
    const record = recordOf(await pollAnswer(indiapost, 'RK987654321IN', fixtureResponse('indiapost', 'own-cancelled.json')));
    expect([record.status, record.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
  });

  it('survives mutations', () => {
    fuzzParser(indiapost, 'RK987654321IN', fixtureResponse('indiapost', 'own-cancelled.json'), 400, 5);
  });
});

describe('speedpost: the sandbox writing the JH… article\'s story gives the same record', () => {
  it('same status, stage, events, attempts and milestones', async () => {
    const real = recordOf(await pollAnswer(adapter, 'JH123456789IN', fixtureResponse('speedpost', RTO)));
    const at = (kind: StepKind, wall: string, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, Date.parse(`${wall}+05:30`), location, extra);
    const shipment: SandboxShipment = {
      carrier: 'speedpost', awb: 'JH123456789IN', scenario: 13, lane: 0,
      origin: { city: 'Dhule', state: 'Maharashtra', pincode: '424002' },
      destination: { city: 'Pune', state: 'Maharashtra', pincode: '411001' },
      bookedAt: Date.parse('2025-08-13T15:31:52+05:30'), edd: Date.parse('2025-08-16T00:00:00+05:30'), weightGrams: 750, serviceType: 'speed_post', shuffled: false,
      steps: [
        at('booked', '2025-08-13T15:31:52', 'Dhule'),
        at('bagged', '2025-08-13T19:02:31', 'Dhule'),
        at('hub_out', '2025-08-14T21:30:00', 'Dhule'),
        at('hub_in', '2025-08-15T06:12:44', 'Pune'),
        at('out_for_delivery', '2025-08-16T08:55:09', 'Pune'),
        at('attempt_failed', '2025-08-16T17:40:00', 'Pune', { ndr: 'customer_unavailable' }),
        at('out_for_delivery', '2025-08-18T09:05:12', 'Pune'),
        at('attempt_failed', '2025-08-18T16:20:40', 'Pune', { ndr: 'premises_closed' }),
        at('rto_initiated', '2025-08-19T09:15:00', 'Pune', { remark: 'Addressee Moved' }),
        at('rto_in_transit', '2025-08-19T20:02:11', 'Pune'),
        at('hub_in', '2025-08-21T07:45:30', 'Dhule'),
        at('rto_delivered', '2025-08-22T12:10:05', 'Dhule'),
      ],
    };
    const endpoint = { baseUrl: 'http://sandbox.test/speedpost', credentials: { username: 'sandbox', password: 'sandbox' } };
    const { record } = await fetchAndNormalize(adapter, renderer, endpoint, shipment, Date.parse('2026-11-23T06:30:00.000Z'));
    expect(storyOf(record)).toEqual(storyOf(real));
  });
});
