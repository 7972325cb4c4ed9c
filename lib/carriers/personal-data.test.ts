/**
 * Personal data in every carrier body the project keeps (real bodies and bodies written in their
 * shape, lib/carriers/<slug>/fixtures): names of consignees, senders and delivery staff, and their
 * phone numbers, never reach the published poll (decisions.md "Personal data"; issue 13: staff
 * written after a route or employee code).
 */
import { describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.ts';
import { fixtureResponse, pollAnswer } from '../../test/support/carriers/fixtures.ts';

/** People and their numbers as the bodies write them (the real bodies' made-up replacements included). */
const PEOPLE: Record<string, RegExp> = {
  bluedart: /RUQSANA|FAROOQ|9812345678|ANIL GHOSH|9830000000/i,
  delhivery: /ARJUN MEHTA|Rohan|JagdeepSingh/,
  shiprocket: /Farida|Naruto|Nandinayani|Bhaskara|9963133564/,
  shreemaruti: /Meena|Patil|Santosh|Jadhav|9890011122|9812300000|9822200000/,
  ekart: /Karthik|9443300011/,
  xpressbees: /Rakesh|Yadav|9415012345/,
  speedpost: /Sunita|Deshmukh|9822011111/,
};

/** The bodies that carry a shipment, with the number each answers for. */
const BODIES: [slug: string, file: string, awb: string][] = [
  ['bluedart', 'legacy-routingservlet-xml-delivered-44330038841-2012.xml', '44330038841'],
  ['bluedart', 'own-gateway-ndr-then-return-new-waybill.json', '90412345671'],
  ['delhivery', 'in-transit-bag-received-amritsar-2024.json', '26805710004126'],
  ['delhivery', 'staging-manifested-dehradun-2024.json', '84108410000151'],
  ['shiprocket', 'postman-doc-track-awb-delivered-xpressbees.json', '141123221084922'],
  ['shiprocket', 'postman-doc-track-order-id.json', '1091188857722'],
  ['shiprocket', 'postman-doc-track-shipment-picked-up-delhivery.json', '1091188857722'],
  ['shreemaruti', 'own-delivered-after-ndr.json', '5012345678'],
  ['ekart', 'own-web-delivered-after-ndr.json', 'FMPP4307095480'],
  ['xpressbees', 'own-relayed-texts-ndr-rto.json', '141123221084931'],
  ['speedpost', 'own-JH-ndr-then-rto.json', 'JH123456789IN'],
];

describe('no person in a published poll', () => {
  it.each(BODIES)('%s %s', async (slug, name, awb) => {
    const poll = await pollAnswer(ADAPTERS[slug]!, awb, fixtureResponse(slug, name, 200, name.endsWith('.xml') ? 'application/xml' : 'application/json'));
    expect(poll.outcome, poll.error ?? '').toBe('ok');
    expect(poll.scans.length).toBeGreaterThan(0);
    expect(JSON.stringify(poll)).not.toMatch(PEOPLE[slug]!);
  });

  it('the raw Xpressbees text keeps no staff name even where no adapter cuts the agent detail', async () => {
    const text = 'Out for delivery: 383439-Nandinayani Reddy Bhaskara Sitics Logistics  (356231) (383439)-PDS22200085719383439-FromMob , MobileNo:- 9963133564';
    const body = JSON.stringify({ status: true, data: { history: [{ event_time: '2022-07-19 11:37', location: 'HYD/KPH, Hyderabad, Telangana', message: text }] } });
    const poll = await pollAnswer(ADAPTERS.xpressbees!, '141123221084922', { status: 200, headers: {}, body });
    expect(poll.outcome, poll.error ?? '').toBe('ok');
    expect(JSON.stringify(poll)).not.toMatch(PEOPLE.shiprocket!);
  });
});
