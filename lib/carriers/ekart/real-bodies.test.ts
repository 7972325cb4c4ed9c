/**
 * Ekart's real bodies (fixtures/SOURCES.md) and bodies written in their web-tracking shape: each
 * gives the outcome it means, through poll() → redaction → normalization → record.
 */
import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/ekart.ts';
import type { SandboxShipment, SandboxStep, StepKind } from '../../sandbox/types.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { fetchAndNormalize, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import { adapter } from './adapter.ts';

const DELIVERED = 'own-web-delivered-after-ndr.json';
const RTO = 'own-web-ndr-then-rto.json';
const CANCELLED = 'own-web-cancelled.json';
const iso = (ms: number) => new Date(ms).toISOString();

function recordOf(poll: CarrierPoll) {
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, '2026-11-23T06:30:00.000Z');
}

describe('ekart real bodies (public web tracking)', () => {
  it('{} is not found', async () => {
    expect((await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', 'web-trackings-v2-not-found.json'))).outcome).toBe('not_found');
  });

  it('a CSRF refusal is an error naming Ekart and the field', async () => {
    const poll = await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', 'web-trackings-v2-csrf-error.json'));
    expect(poll.error).toBe('ekart: request refused (csrfError.code EBADCSRFTOKEN)');
  });

  it('the excerpt the source cut is an error (invalid JSON), never a crash or a silent not found', async () => {
    const poll = await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', 'web-trackings-v2-excerpt-TRUNCATED.txt'));
    expect(poll).toMatchObject({ outcome: 'error', error: 'ekart: invalid JSON' });
  });
});

describe('ekart in the web shape: the excerpt\'s shipment, delivered after a failed attempt', () => {
  it('reads epoch-millisecond dates as instants and the two real rows as created and picked up', async () => {
    const poll = await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', DELIVERED));
    expect(poll.scans.slice(0, 2)).toEqual([
      { occurred_at: '2026-09-29T03:50:08.000Z', raw_status: 'Shipment Created', raw_code: null, remarks: null, location: 'BANGALORE' },
      { occurred_at: '2026-09-29T07:44:25.000Z', raw_status: 'Pickup From Seller', raw_code: null, remarks: null, location: 'BANGALORE' },
    ]);
    expect(poll.shipment).toMatchObject({ origin: { city: 'BANGALORE', pincode: '560067' }, destination: { city: 'PONDICHERRY', pincode: '605001' }, estimated_delivery_at: '2026-10-02T18:29:59.000Z' });
    expect(JSON.stringify(poll)).not.toMatch(/9443300011/);
    const record = recordOf(poll);
    expect(record).toMatchObject({ status: 'delivered', delivered_at: iso(1790866500000) });
    expect(record.milestones.picked_up_at).toBe('2026-09-29T07:44:25.000Z');
    expect(record.delivery_attempts.attempts.map((a) => [a.outcome, a.reason_code])).toEqual([['failed', 'customer_unavailable'], ['delivered', null]]);
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('the sandbox writing the same story gives the same record', async () => {
    const real = recordOf(await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', DELIVERED)));
    const at = (kind: StepKind, ms: number, location: string, extra: Partial<SandboxStep> = {}) => storyStep(kind, ms, location, extra);
    const shipment: SandboxShipment = {
      carrier: 'ekart', awb: 'FMPP4307095480', scenario: 10, lane: 0,
      origin: { city: 'Bangalore', state: 'Karnataka', pincode: '560067' },
      destination: { city: 'Pondicherry', state: 'Puducherry', pincode: '605001' },
      bookedAt: 1790653808000, edd: 1790965799000, weightGrams: 500, serviceType: 'surface', shuffled: false,
      steps: [
        at('booked', 1790653808000, 'Bangalore'),
        at('picked_up', 1790667865000, 'Bangalore'),
        at('hub_in', 1790690400000, 'Bangalore'),
        at('hub_out', 1790701200000, 'Bangalore'),
        at('hub_in', 1790760600000, 'Pondicherry'),
        at('out_for_delivery', 1790768700000, 'Pondicherry'),
        at('attempt_failed', 1790790300000, 'Pondicherry', { ndr: 'customer_unavailable' }),
        at('out_for_delivery', 1790855100000, 'Pondicherry'),
        at('delivered', 1790866500000, 'Pondicherry'),
      ],
    };
    const endpoint = { baseUrl: 'http://sandbox.test/ekart', credentials: { token: 'sandbox', merchant_code: 'sandbox' } };
    const { record } = await fetchAndNormalize(adapter, renderer, endpoint, shipment, Date.parse('2026-11-23T06:30:00.000Z'));
    expect(storyOf(record)).toEqual(storyOf(real));
    expect(record.events.map((e) => e.location)).toEqual(real.events.map((e) => e.location));
  });
});

describe('ekart in the web shape: failed attempts, then the return; a cancellation', () => {
  it('reads each attempt\'s reason and follows the return to the seller', async () => {
    const record = recordOf(await pollAnswer(adapter, 'FMPC0279658213', fixtureResponse('ekart', RTO)));
    expect(record.delivery_attempts.attempts.map((a) => a.reason_code)).toEqual(['refused', 'address_issue']);
    expect(record).toMatchObject({ status: 'returned', is_rto: true });
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('a cancellation before pickup is cancelled', async () => {
    const record = recordOf(await pollAnswer(adapter, 'FMPC0279658299', fixtureResponse('ekart', CANCELLED)));
    expect([record.status, record.insights.current_stage]).toEqual(['cancelled', 'cancelled']);
  });
});

describe('ekart parser on the web shape', () => {
  it('ignores unknown fields', async () => {
    const body = JSON.parse(fixtureText('ekart', DELIVERED)) as Record<string, { shipmentTrackingDetails: Record<string, unknown>[] } & Record<string, unknown>>;
    const entry = body.FMPP4307095480!;
    entry.somethingNew = { a: [1, 2] };
    for (const d of entry.shipmentTrackingDetails) d.geo = { lat: 12.9, lng: 77.6 };
    const withExtras = await pollAnswer(adapter, 'FMPP4307095480', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(withExtras.scans).toEqual((await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', DELIVERED))).scans);
  });

  it.each([
    ['a row without its text', (b: string) => b.replace('"statusDetails":"Pickup From Seller"', '"status":"Pickup From Seller"'), 'ekart: unexpected JSON at FMPP4307095480.shipmentTrackingDetails.1.statusDetails'],
    ['a date that is no epoch number', (b: string) => b.replace('"date":1790667865000', '"date":"29-09-2026"'), 'ekart: unexpected JSON at FMPP4307095480.shipmentTrackingDetails.1.date'],
    ['a date out of range', (b: string) => b.replace('"date":1790667865000', '"date":1e20'), 'ekart: unreadable shipmentTrackingDetails.1.date'],
  ])('%s is an error naming Ekart and the field', async (_name, edit, error) => {
    const poll = await pollAnswer(adapter, 'FMPP4307095480', { status: 200, headers: {}, body: edit(fixtureText('ekart', DELIVERED)) });
    expect(poll).toMatchObject({ outcome: 'error', error });
  });

  it.each([DELIVERED, RTO, CANCELLED])('survives mutations of %s', (name) => {
    fuzzParser(adapter, 'FMPP4307095480', fixtureResponse('ekart', name), 600, name.length);
  });
});
