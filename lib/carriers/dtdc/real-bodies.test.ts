/**
 * DTDC's real bodies (fixtures/SOURCES.md) and bodies written in their shape: what a person reading
 * each body would say, through the whole product (poll() → redaction → normalization → record).
 */
import { describe, expect, it } from 'vitest';
import { renderer } from '../../sandbox/carriers/dtdc.ts';
import type { SandboxShipment, StepKind } from '../../sandbox/types.ts';
import type { CarrierPoll } from '../../schemas/index.ts';
import { answer } from '../../testutil/product.ts';
import { fixtureResponse, fixtureText, pollAnswer } from '../../../test/support/carriers/fixtures.ts';
import { fuzzParser } from '../../../test/support/carriers/fuzz.ts';
import { fetchAndNormalize, istAt, storyOf } from '../../../test/support/carriers/round-trip.ts';
import { storyStep } from '../../../test/support/carriers/story.ts';
import { adapter } from './adapter.ts';

const DELIVERED = 'karrio-doc-sample-json-delivered-B32242001.json';
const RTO = 'own-7D9128969-ndr-then-rto-delivered.json';
const LOST = 'own-V01197967-held-lost.json';
const utc = (wall: string) => new Date(istAt(wall)).toISOString();

function recordOf(poll: CarrierPoll) {
  expect(poll.outcome, poll.error ?? '').toBe('ok');
  return answer(poll, '2026-11-23T06:30:00.000Z');
}

describe('dtdc real body: documented sample, delivered (B32242001)', () => {
  it('reads every action with its code, IST times and the header', async () => {
    const poll = await pollAnswer(adapter, 'B32242001', fixtureResponse('dtdc', DELIVERED));
    expect(poll.scans).toHaveLength(11);
    expect(poll.scans.map((s) => s.raw_code)).toEqual(['BKD', 'OBMD', 'OPMF', 'IBMD', 'CDOUT', 'CDIN', 'IPMF', 'IBMD', 'OBMD', 'OUTDLV', 'DLV']);
    expect(poll.scans.at(-1)).toEqual({ occurred_at: '2017-06-21T16:14:00', raw_status: 'Delivered', raw_code: 'DLV', remarks: 'SIGN', location: 'MUMBAI APEX' });
    expect(poll.shipment).toMatchObject({ origin: { city: 'BANGALORE' }, destination: { city: 'MUMBAI' }, weight_grams: 100, booked_at: '2017-06-21T15:30:25' });
  });

  it('is delivered on 21 June 2017 at 16:14 IST after one attempt, booked at the Bangalore counter', async () => {
    const record = recordOf(await pollAnswer(adapter, 'B32242001', fixtureResponse('dtdc', DELIVERED)));
    expect(record.status).toBe('delivered');
    expect(record.insights.current_stage).toBe('delivered');
    expect(record.delivered_at).toBe(utc('2017-06-21T16:14'));
    expect(record.milestones.out_for_delivery_at).toBe(utc('2017-06-21T16:11'));
    expect(record.delivery_attempts).toEqual({ count: 1, attempts: [{ at: utc('2017-06-21T16:14'), outcome: 'delivered', reason_code: null, reason_text: null }] });
    // Scans at one minute with one text and place are one event (decisions.md); the codes decide the moves.
    expect(storyOf(record).events.map((e) => [e.at, e.code])).toEqual([
      [utc('2017-06-21T16:14'), 'delivered'],
      [utc('2017-06-21T16:11'), 'out_for_delivery'],
      [utc('2017-06-21T16:03'), 'received'],
      [utc('2017-06-21T15:55'), 'received'],
      [utc('2017-06-21T15:46'), 'dispatched'],
      [utc('2017-06-21T15:33'), 'dispatched'],
      [utc('2017-06-21T15:30'), 'booked'],
    ]);
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });

  it('the sandbox writing the same story gives the same record', async () => {
    const real = recordOf(await pollAnswer(adapter, 'B32242001', fixtureResponse('dtdc', DELIVERED)));
    const at = (kind: StepKind, wall: string, location: string, remark: string | null = null) => storyStep(kind, istAt(wall), location, { remark });
    const shipment: SandboxShipment = {
      carrier: 'dtdc', awb: 'B32242001', scenario: 4, lane: 0,
      origin: { city: 'Bangalore', state: 'Karnataka', pincode: '560001' },
      destination: { city: 'Mumbai', state: 'Maharashtra', pincode: '400001' },
      bookedAt: istAt('2017-06-21T15:30'), edd: null, weightGrams: 100, serviceType: 'express', shuffled: false,
      steps: [
        at('booked', '2017-06-21T15:30', 'Bangalore Surface Apex'),
        at('hub_out', '2017-06-21T15:33', 'Bangalore Surface Apex'),
        at('hub_out', '2017-06-21T15:46', 'Bangalore Surface Apex'),
        at('hub_in', '2017-06-21T15:55', 'Bangalore Surface Apex'),
        at('hub_in', '2017-06-21T16:03', 'Bangalore Surface Apex'),
        at('out_for_delivery', '2017-06-21T16:11', 'Mumbai Apex'),
        at('delivered', '2017-06-21T16:14', 'Mumbai Apex', 'SIGN'),
      ],
    };
    const endpoint = { baseUrl: 'http://sandbox.test/dtdc', credentials: { username: 'sandbox', password: 'sandbox' } };
    const { record } = await fetchAndNormalize(adapter, renderer, endpoint, shipment, Date.parse('2026-11-23T06:30:00.000Z'));
    expect(storyOf(record)).toEqual(storyOf(real));
    expect(record.events.map((e) => e.location)).toEqual(real.events.map((e) => e.location));
  });
});

describe('dtdc real body: 401, token missing or invalid', () => {
  it('is an error poll that says the credentials were rejected, in DTDC\'s words', async () => {
    const poll = await pollAnswer(adapter, 'B32242001', fixtureResponse('dtdc', 'karrio-error-401-token-missing-or-invalid.json', 401));
    expect(poll).toMatchObject({ outcome: 'error', scans: [], shipment: null });
    expect(poll.error).toBe('dtdc: credentials rejected (HTTP 401: Unauthorized: Authentication token was either missing or invalid.)');
  });
});

describe('dtdc in the real shape: failed attempts with DTDC reason codes, then a return', () => {
  it('reads each NDR code as its reason and follows the return to the shipper', async () => {
    const poll = await pollAnswer(adapter, '7D9128969', fixtureResponse('dtdc', RTO));
    expect(poll.scans.filter((s) => s.raw_code?.includes('|')).map((s) => s.raw_code)).toEqual(['NONDLV|PNA', 'NONDLV|DLK', 'NONDLV|CAN', 'RTONONDLV|DLK']);
    const record = recordOf(poll);
    expect(record.delivery_attempts.attempts.map((a) => [a.at, a.reason_code])).toEqual([
      [utc('2025-11-06T17:10'), 'customer_unavailable'], [utc('2025-11-07T16:42'), 'premises_closed'], [utc('2025-11-08T15:55'), 'cod_not_ready'],
    ]);
    expect(record).toMatchObject({ status: 'returned', is_rto: true, is_delivered: false });
    expect(record.insights.current_stage).toBe('rto_delivered');
    expect(record.milestones).toMatchObject({ rto_initiated_at: utc('2025-11-09T10:10'), rto_delivered_at: utc('2025-11-14T11:05'), delivered_at: null });
    // Softdata upload and pickup scheduling come before anything moved; the counter booking is the pickup.
    expect(record.milestones.picked_up_at).toBe(utc('2025-11-03T11:20'));
    expect(record.events.every((e) => e.code !== 'unknown')).toBe(true);
  });
});

describe('dtdc in the real shape: held, mis-routed, lost', () => {
  it('holds are NDR other while moving; under investigation and LST are exceptions needing attention', async () => {
    const record = recordOf(await pollAnswer(adapter, 'V01197967', fixtureResponse('dtdc', LOST)));
    expect(record.status).toBe('exception');
    expect(record.insights).toMatchObject({ current_stage: 'exception', requires_attention: true });
    expect(record.events.filter((e) => e.reason_code === 'other').map((e) => e.status_text)).toEqual(['Mis Route', 'Held Up']);
    expect(record.delivery_attempts.count).toBe(0);
  });
});

describe('dtdc parser on the real shapes', () => {
  it('ignores unknown fields anywhere', async () => {
    const body = JSON.parse(fixtureText('dtdc', DELIVERED)) as { trackDetails: Record<string, unknown>[]; trackHeader: Record<string, unknown> };
    body.trackHeader.strNewThing = { nested: [1, 2] };
    for (const d of body.trackDetails) Object.assign(d, { strLatitude: '19.07', strLongitude: '72.87', strCodeVersion: 3 });
    const withExtras = await pollAnswer(adapter, 'B32242001', { status: 200, headers: {}, body: JSON.stringify({ ...body, version: '2.3' }) });
    const plain = await pollAnswer(adapter, 'B32242001', fixtureResponse('dtdc', DELIVERED));
    expect(withExtras.scans).toEqual(plain.scans);
  });

  it('an action without its text is an error naming DTDC and the field', async () => {
    const body = JSON.parse(fixtureText('dtdc', DELIVERED)) as { trackDetails: Record<string, unknown>[] };
    delete body.trackDetails[3]!.strAction;
    const poll = await pollAnswer(adapter, 'B32242001', { status: 200, headers: {}, body: JSON.stringify(body) });
    expect(poll.outcome).toBe('error');
    expect(poll.error).toMatch(/^dtdc: .*trackDetails\.3\.strAction/);
  });

  it.each([DELIVERED, RTO, LOST])('survives mutations of %s', (name) => {
    fuzzParser(adapter, 'B32242001', fixtureResponse('dtdc', name), 600, name.length);
  });
});
