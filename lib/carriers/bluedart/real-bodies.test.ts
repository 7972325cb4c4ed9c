/** Blue Dart's real bodies (fixtures/SOURCES.md): what a person reading each would say, through poll() → record. */
import { describe, expect, it } from 'vitest';
import { answer } from '../../testing/product.ts';
import { fixtureResponse, pollAnswer } from '../testing/fixtures.ts';
import { fuzzParser } from '../testing/fuzz.ts';
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
