/** Professional Couriers bodies written in both real plain-text layouts (fixtures/SOURCES.md). */
import { describe, expect, it } from 'vitest';
import { renderer, usesSecondLayout } from '../../sandbox/carriers/professionalcouriers.ts';
import type { SandboxShipment, StepKind } from '../../sandbox/types.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { fetchAndNormalize, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import { adapter } from './adapter.ts';

const LAYOUT1 = 'own-layout1-delivered-after-ndr.txt';
const LAYOUT2 = 'own-layout2-ndr-then-rto.txt';
const CANCELLED = 'own-layout2-cancelled.txt';
const text = (name: string) => fixtureResponse('professionalcouriers', name, 200, 'text/plain');
const utc = (wall: string) => new Date(Date.parse(`${wall}+05:30`)).toISOString();

function recordOf(poll: CarrierPoll) {
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, '2026-11-23T06:30:00.000Z');
}

describe('professionalcouriers, first layout: a door-locked attempt, then delivered', () => {
  it('is delivered after one failed attempt', async () => {
    const record = recordOf(await pollAnswer(adapter, 'ITMI1505876', text(LAYOUT1)));
    expect(record).toMatchObject({ status: 'delivered', delivered_at: utc('2026-11-19T14:02:36') });
    expect(record.delivery_attempts.attempts.map((a) => [a.outcome, a.reason_code])).toEqual([['failed', 'premises_closed'], ['delivered', null]]);
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });
});

describe('professionalcouriers, second layout: status line first, indents, City and WayNo apart', () => {
  it('reads the same scans as the first layout would', async () => {
    const poll = await pollAnswer(adapter, 'MDU2204117', text(LAYOUT2));
    expect(poll.scans.map((s) => [s.occurred_at, s.location, s.raw_status])).toEqual([
      ['2026-11-21T12:10:00', 'Madurai', 'Delivered to Shipper'],
      ['2026-11-20T18:45:30', 'Trichy', 'RTO - Despatched to Madurai'],
      ['2026-11-20T10:00:00', 'Trichy', 'RTO - Return to Shipper'],
      ['2026-11-19T15:20:00', 'Trichy', 'Address Improper - Area'],
      ['2026-11-19T09:00:00', 'Trichy', 'outfordelivery: Out for Delivery - Area'],
      ['2026-11-18T07:30:00', 'Madurai', 'Booked at Madurai'],
    ]);
    expect(poll.shipment?.weight_grams).toBe(500);
  });

  it('follows the address issue to the return delivered to the shipper', async () => {
    const record = recordOf(await pollAnswer(adapter, 'MDU2204117', text(LAYOUT2)));
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual(['address_issue']);
    expect(record).toMatchObject({ status: 'returned', is_rto: true });
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('a cancelled booking is cancelled', async () => {
    const record = recordOf(await pollAnswer(adapter, 'CJB3300121', text(CANCELLED)));
    expect([record.status, record.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
  });

  it('a block without its Activity is an error naming the carrier and the field', async () => {
    const body = fixtureText('professionalcouriers', LAYOUT2).replace('  Activity : Address Improper - Area  \r\n', '');
    const poll = await pollAnswer(adapter, 'MDU2204117', { status: 200, headers: {}, body });
    expect(poll.error).toBe('professionalcouriers: scan of 2026-11-19T15:20:00 has no Activity');
  });

  it('unknown label lines are ignored', async () => {
    const body = fixtureText('professionalcouriers', LAYOUT2).replace(/ {2}Pieces : 1 {3}Weight : 0\.5 {2}/g, '  Pieces : 1   Weight : 0.5  \r\n  Vehicle No : TN45AB1234  ');
    const poll = await pollAnswer(adapter, 'MDU2204117', { status: 200, headers: {}, body });
    expect(poll.scans).toEqual((await pollAnswer(adapter, 'MDU2204117', text(LAYOUT2))).scans);
  });

  it.each([LAYOUT1, LAYOUT2, CANCELLED])('survives mutations of %s', (name) => {
    fuzzParser(adapter, 'MDU2204117', text(name), 600, name.length);
  });
});

describe('professionalcouriers sandbox writes the second layout on odd lanes', () => {
  it('the sandbox writing the second layout\'s story gives the same record', async () => {
    const real = recordOf(await pollAnswer(adapter, 'MDU2204117', text(LAYOUT2)));
    const at = (kind: StepKind, wall: string, location: string, ndr: 'address_issue' | null = null) => storyStep(kind, Date.parse(`${wall}+05:30`), location, { ndr });
    const shipment: SandboxShipment = {
      carrier: 'professionalcouriers', awb: 'MDU2204117', scenario: 13, lane: 1,
      origin: { city: 'Madurai', state: 'Tamil Nadu', pincode: '625001' },
      destination: { city: 'Trichy', state: 'Tamil Nadu', pincode: '620001' },
      bookedAt: Date.parse('2026-11-18T07:30:00+05:30'), edd: null, weightGrams: 500, serviceType: 'surface', shuffled: false,
      steps: [
        at('booked', '2026-11-18T07:30:00', 'Madurai'),
        at('out_for_delivery', '2026-11-19T09:00:00', 'Trichy'),
        at('attempt_failed', '2026-11-19T15:20:00', 'Trichy', 'address_issue'),
        at('rto_initiated', '2026-11-20T10:00:00', 'Trichy'),
        at('rto_in_transit', '2026-11-20T18:45:30', 'Trichy'),
        at('rto_delivered', '2026-11-21T12:10:00', 'Madurai'),
      ],
    };
    expect(usesSecondLayout(shipment)).toBe(true);
    const endpoint = { baseUrl: 'http://sandbox.test/professionalcouriers', credentials: {} };
    const { record, response } = await fetchAndNormalize(adapter, renderer, endpoint, shipment, Date.parse('2026-11-23T06:30:00.000Z'));
    expect(response.body.startsWith('  Delivered to Shipper  \r\n')).toBe(true);
    expect(storyOf(record)).toEqual(storyOf(real));
    expect(record.events.map((e) => e.location)).toEqual(real.events.map((e) => e.location));
  });
});
