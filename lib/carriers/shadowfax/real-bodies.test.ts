/**
 * Shadowfax's real body (fixtures/SOURCES.md) and bodies written in its shape: what a person reading
 * each would say, through poll() → record.
 */
import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/shadowfax.ts';
import type { SandboxShipment, StepKind } from '../../sandbox/types.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { fetchAndNormalize, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import { adapter } from './adapter.ts';

const DELIVERED = 'forward-delivered-staging-2024.json';
const RTS = 'own-ndr-then-rts-delivered.json';
const NOW = '2026-11-23T06:30:00.000Z';
const poll = (name: string, awb: string) => pollAnswer(adapter, awb, fixtureResponse('shadowfax', name));
function recordOf(polled: CarrierPoll) {
  expect(polled.outcome, polled.error ?? '').toBe('ok');
  return answer(polled, NOW);
}

describe('shadowfax real body: forward delivered, order status lagging (SF100000022431JIF)', () => {
  it('is delivered 8 Apr 2024 09:35:40 UTC (15:05 IST): the rows win over the order\'s "sent_to_fwd"', async () => {
    const record = recordOf(await poll(DELIVERED, 'SF100000022431JIF'));
    expect(record).toMatchObject({ status: 'delivered', is_delivered: true, delivered_at: '2024-04-08T09:35:40.000Z' });
    expect(record.insights.current_stage).toBe('delivered');
    expect(record.events.map((e) => e.code).reverse()).toEqual([
      'booked', 'received', 'bagged', 'received', 'dispatched', 'received', 'received', 'out_for_delivery', 'delivered',
    ]);
    expect(record.milestones.out_for_delivery_at).toBe('2024-04-08T09:34:38.000Z');
    expect(record.destination).toMatchObject({ city: 'RAICHUR', pincode: '560077' });
  });

  it('the sandbox writing the same story gives the same record', async () => {
    const real = recordOf(await poll(DELIVERED, 'SF100000022431JIF'));
    const at = (kind: StepKind, iso: string, location: string) => storyStep(kind, Date.parse(iso), location);
    const shipment: SandboxShipment = {
      carrier: 'shadowfax', awb: 'SF100000022431JIF', scenario: 4, lane: 0,
      origin: { city: 'Tumkur', state: 'Karnataka', pincode: '562123' }, destination: { city: 'Raichur', state: 'Karnataka', pincode: '560077' },
      bookedAt: Date.parse('2024-04-05T10:29:08Z'), edd: null, weightGrams: 500, serviceType: 'surface', shuffled: false,
      steps: [
        at('booked', '2024-04-05T10:29:08Z', 'NCR Bijwasan DC'), at('hub_in', '2024-04-08T07:28:01Z', 'NCR Bijwasan DC'),
        at('bagged', '2024-04-08T07:28:21Z', 'NCR Bijwasan DC'), at('hub_in', '2024-04-08T07:28:55Z', 'Bangalore DC'),
        at('hub_out', '2024-04-08T07:30:04Z', 'Bangalore DC'), at('hub_in', '2024-04-08T08:16:41Z', 'BLR_Hebbal'),
        at('hub_in', '2024-04-08T08:17:18Z', 'BLR_Hebbal'), at('out_for_delivery', '2024-04-08T09:34:38Z', 'BLR_Hebbal'),
        at('delivered', '2024-04-08T09:35:40Z', 'BLR_Hebbal'),
      ],
    };
    const { record } = await fetchAndNormalize(adapter, renderer, { baseUrl: 'http://sandbox.test/shadowfax', credentials: { token: 'sandbox' } }, shipment, Date.parse(NOW));
    expect(storyOf(record)).toEqual(storyOf(real));
  });
});

describe('shadowfax in the real shape', () => {
  it('na / cid attempts with their reasons, then the return to the seller to rts_d; the lagging order status is ignored', async () => {
    const polled = await poll(RTS, 'SF100000022977JIF');
    expect(JSON.stringify(polled)).not.toMatch(/Meera|9812345678|Lake Road/);
    const record = recordOf(polled);
    expect(record.delivery_attempts.attempts.map((a) => [a.at, a.reason_code])).toEqual([
      ['2024-05-03T13:20:00.000Z', 'customer_unavailable'], ['2024-05-04T10:05:00.000Z', 'refused'],
    ]);
    expect(record).toMatchObject({ status: 'returned', is_rto: true });
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.estimated_delivery_at).toBe('2024-05-05T18:29:59.000Z');
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('cancelled by the customer is cancelled; an empty data[] is not found', async () => {
    expect(recordOf(await poll('own-cancelled.json', 'SF100000022978JIF')).status).toBe('cancelled');
    expect((await poll('own-not-found.json', 'SF100000022979JIF')).outcome).toBe('not_found');
  });

  it('a 401 says credentials; a row without its time is an error naming Shadowfax and the field', async () => {
    expect((await pollAnswer(adapter, 'SF100000022431JIF', { status: 401, headers: {}, body: '{"detail":"Invalid token."}' })).error)
      .toBe('shadowfax: credentials rejected (HTTP 401: Invalid token.)');
    const body = JSON.parse(fixtureText('shadowfax', DELIVERED)) as { data: { tracking_details: Record<string, unknown>[] }[] };
    delete body.data[0]!.tracking_details[4]!.created;
    const broken = await pollAnswer(adapter, 'SF100000022431JIF', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(broken.error).toBe('shadowfax: unexpected JSON at data.0.tracking_details.4.created');
  });

  it('ignores unknown fields; an unreadable time names the row and field', async () => {
    const body = JSON.parse(fixtureText('shadowfax', DELIVERED)) as { data: ({ tracking_details: Record<string, unknown>[] } & Record<string, unknown>)[] } & Record<string, unknown>;
    body.data[0]!.new_field = { nested: [1] };
    for (const row of body.data[0]!.tracking_details) row.rider_lat_long = '12.9,77.6';
    const withExtras = await pollAnswer(adapter, 'SF100000022431JIF', { status: 200, headers: {}, body: JSON.stringify({ ...body, version: 4 }) });
    expect(withExtras.scans).toEqual((await poll(DELIVERED, 'SF100000022431JIF')).scans);
    body.data[0]!.tracking_details[2]!.created = '05/04/2024 10:29';
    const broken = await pollAnswer(adapter, 'SF100000022431JIF', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(broken.error).toBe('shadowfax: unreadable tracking_details.2.created "05/04/2024 10:29"');
  });

  it.each([DELIVERED, RTS, 'own-cancelled.json'])('survives mutations of %s', (name) => {
    fuzzParser(adapter, 'SF100000022431JIF', fixtureResponse('shadowfax', name), 400, name.length);
  });
});
