/**
 * Where the parcel is (position.ts): on every carrier's real bodies (and the bodies written in
 * their shape), on each sandbox renderer's answers, and on the texts the issue names. Unknown stays
 * unknown: a text naming no known place, or a place that cannot be told from the origin, is never guessed.
 */
import { describe, expect, it } from 'vitest';
import { ADAPTERS } from '../carriers/adapters.ts';
import { sandboxEndpoint } from '../carriers/endpoints.ts';
import { normalizePoll } from '../normalize/index.ts';
import { loadPlaces } from '../places/index.ts';
import { RENDERERS } from '../sandbox/renderers.ts';
import { requireAwb, type CarrierPoll, type TrackingRecord } from '../schemas/index.ts';
import { CORPUS, corpusText } from '../testutil/carrier-corpus.ts';
import { product } from '../testutil/product.ts';
import { HOUR_MS } from '../time/index.ts';
import { fetchAndNormalize } from '../../test/support/carriers/round-trip.ts';
import { shipmentBuilder, storyStep } from '../../test/support/carriers/story.ts';
import { placeLookupOf } from './places.ts';
import { POSITIONS, positionOf, scanPositions, type Position } from './position.ts';
import { positionScansOf } from './records.ts';

const names = placeLookupOf(loadPlaces()).names!;

/** The position after each of a record's scans, oldest first. */
function positionsOf(record: Pick<TrackingRecord, 'events' | 'origin' | 'destination'>): Position[] {
  return [...scanPositions(positionScansOf(record), record.origin, record.destination, names)].map((p) => POSITIONS[p]!);
}

/** Each corpus body that answers a shipment, normalized as a poll of it. */
function corpusRecords(): { name: string; record: TrackingRecord }[] {
  const out: { name: string; record: TrackingRecord }[] = [];
  for (const body of CORPUS) {
    const parsed = ADAPTERS[body.carrier]!.parse(requireAwb(body.awb), {
      status: body.status ?? 200, headers: { 'content-type': body.contentType ?? 'application/json' }, body: corpusText(body),
    });
    if (parsed.outcome !== 'ok') continue;
    const poll: CarrierPoll = {
      schema: 'carrier_poll.v1', poll_id: '00000000-0000-4000-8000-000000000000', carrier: body.carrier, awb: body.awb,
      polled_at: '2026-11-23T06:30:00.000Z', source: 'replay', outcome: 'ok', shipment: parsed.shipment, scans: parsed.scans, error: null,
    };
    const result = normalizePoll(poll, product.rules);
    if (result.kind === 'found') out.push({ name: `${body.carrier}/${body.file}#${body.awb}`, record: result.shipment.record as TrackingRecord });
  }
  return out;
}

describe('reading a location text', () => {
  it('finds the city in each carrier’s wording, and the state alone when the city is not known', () => {
    const place = (text: string) => names.placeOfText(text);
    expect(place('Mumbai_Hub (Maharashtra)')).toEqual({ state: 'MH', city: 'MH:mumbai' });
    // Leftmost city wins: Dankuni is Hooghly's, the hub is Kolkata's.
    expect(place('KOLKATA DANKUNI HUB')).toEqual({ state: 'WB', city: 'WB:kolkata' });
    expect(place('Bengaluru, Karnataka')).toEqual({ state: 'KA', city: 'KA:bangalore' });
    expect(place('BLR_Hebbal')).toEqual({ state: 'KA', city: 'KA:bangalore' });
    // A post office of one district beats the city code before it.
    expect(place('BOM/BWD, Bhiwandi, Maharashtra')).toEqual({ state: 'MH', city: 'MH:thane' });
    expect(place('Pune City H.O')).toEqual({ state: 'MH', city: 'MH:pune' });
    expect(place('Jalandhar_QajiMandi_P (Punjab)')).toEqual({ state: 'PB', city: 'PB:jalandhar' });
    expect(place('Delhi Bijwasan Hub')).toEqual({ state: 'DL', city: 'DL:delhi' });
    expect(place('MADANPALLI, Madanapalli, ANDHRA PRADESH')).toEqual({ state: 'AP', city: null });
    // Cities no district is named after: Imphal spans Imphal West and East, Kanpur is Kanpur Nagar's, Shillong East Khasi Hills'.
    expect(place('Imphal_Hub_H (Manipur)')).toEqual({ state: 'MN', city: 'MN:imphal west' });
    expect(place('IMPHAL MOTHER HUB')).toEqual({ state: 'MN', city: 'MN:imphal west' });
    expect(place('Kanpur_Panki_H (Uttar Pradesh)')).toEqual({ state: 'UP', city: 'UP:kanpur nagar' });
    expect(place('SHILLONG HUB')).toEqual({ state: 'ML', city: 'ML:east khasi hills' });
    for (const unknown of ['NA', 'OVALI WAREHOUSE', '', 'Hub 7']) expect(place(unknown), unknown).toBeNull();
  });

  it('places a scan relative to the shipment’s ends, never guessing', () => {
    const mumbai = { state: 'MH', city: 'MH:mumbai' };
    const pune = { state: 'MH', city: 'MH:pune' };
    const kolkata = { state: 'WB', city: 'WB:kolkata' };
    const nagpur = { state: 'MH', city: 'MH:nagpur' };
    expect(positionOf(mumbai, mumbai, kolkata)).toBe('origin');
    expect(positionOf(nagpur, mumbai, kolkata)).toBe('en_route');
    expect(positionOf({ state: 'WB', city: 'WB:hooghly' }, mumbai, kolkata)).toBe('destination_state');
    expect(positionOf({ state: 'WB', city: null }, mumbai, kolkata)).toBe('destination_state');
    expect(positionOf(kolkata, mumbai, kolkata)).toBe('destination_city');
    expect(positionOf(kolkata, mumbai, kolkata, 'named')).toBe('delivering_branch');
    expect(positionOf(null, mumbai, kolkata, 'sent')).toBe('delivering_branch');
    // Unknown stays unknown: no place, no destination, or a place that may be the origin.
    expect(positionOf(null, mumbai, kolkata)).toBe('unknown');
    expect(positionOf(nagpur, mumbai, null)).toBe('unknown');
    expect(positionOf(nagpur, null, kolkata)).toBe('unknown');
    expect(positionOf({ state: 'MH', city: null }, pune, kolkata)).toBe('unknown');
    expect(positionOf({ state: 'MH', city: null }, { state: 'GJ', city: null }, kolkata)).toBe('en_route');
  });
});

describe('positions on every carrier’s bodies', () => {
  const records = corpusRecords();
  const latest = Object.fromEntries(records.map(({ name, record }) => [name, positionsOf(record).at(-1)]));

  it('the latest scan of each body', () => {
    expect(latest).toEqual(LATEST);
  });

  it('moves from origin to the delivering branch on real bodies (Delhivery, Blue Dart, DTDC, Shadowfax, Shiprocket)', () => {
    const of = (name: string) => positionsOf(records.find((r) => r.name === name)!.record);
    // The case: a facility in the destination's district (Nakodar is Jalandhar's) is the destination city.
    expect(of('delhivery/in-transit-bag-received-amritsar-2024.json#26805710004126')).toEqual([...Array(7).fill('origin'), 'destination_city', 'destination_city']);
    expect(of('bluedart/legacy-routingservlet-xml-delivered-44330038841-2012.xml#44330038841')).toEqual([
      'unknown', 'unknown', 'en_route', 'en_route', 'en_route', 'en_route', 'destination_city', 'delivering_branch', 'delivering_branch',
    ]);
    expect(of('dtdc/karrio-doc-sample-json-delivered-B32242001.json#B32242001')).toEqual([...Array(5).fill('origin'), 'delivering_branch', 'delivering_branch']);
    expect(of('shadowfax/forward-delivered-staging-2024.json#SF100000022431JIF').slice(-5)).toEqual([
      'destination_city', 'destination_city', 'destination_city', 'delivering_branch', 'delivering_branch',
    ]);
    // Shiprocket's origin "Banglore" is no place: the first scans may be the origin, so they stay unknown.
    expect(of('shiprocket/postman-doc-track-awb-delivered-xpressbees.json#141123221084922')).toEqual([
      ...Array(5).fill('unknown'), 'destination_state', 'delivering_branch', 'delivering_branch',
    ]);
  });
});

/** Each body's latest position (checked by reading each body's scans: see the file's comment). */
const LATEST: Record<string, Position> = {
  'bluedart/legacy-routingservlet-xml-delivered-44330038841-2012.xml#44330038841': 'delivering_branch',
  'bluedart/own-gateway-ndr-then-return-new-waybill.json#90412345671': 'origin',
  'bluedart/own-servlet-cancelled.xml#90412345682': 'origin',
  'delhivery/in-transit-bag-received-amritsar-2024.json#26805710004126': 'destination_city',
  'delhivery/own-cancelled.json#1490812345614': 'origin',
  'delhivery/own-delivered-then-pod-scans.json#1490812345613': 'delivering_branch',
  'delhivery/own-ndr-then-rto-pending.json#1490812345612': 'origin',
  'delhivery/staging-manifested-dehradun-2024.json#84108410000151': 'origin',
  'dtdc/karrio-doc-sample-json-delivered-B32242001.json#B32242001': 'delivering_branch',
  'dtdc/own-7D9128969-ndr-then-rto-delivered.json#7D9128969': 'origin',
  'dtdc/own-V01197967-held-lost.json#V01197967': 'destination_city',
  'ekart/own-web-cancelled.json#FMPC0279658299': 'origin',
  'ekart/own-web-delivered-after-ndr.json#FMPP4307095480': 'delivering_branch',
  'ekart/own-web-ndr-then-rto.json#FMPC0279658213': 'origin',
  'indiapost/own-cancelled.json#RK987654321IN': 'origin',
  'professionalcouriers/own-layout1-delivered-after-ndr.txt#ITMI1505876': 'delivering_branch',
  'professionalcouriers/own-layout2-cancelled.txt#CJB3300121': 'unknown',
  'professionalcouriers/own-layout2-ndr-then-rto.txt#MDU2204117': 'unknown',
  'shadowfax/forward-delivered-staging-2024.json#SF100000022431JIF': 'delivering_branch',
  'shadowfax/own-cancelled.json#SF100000022978JIF': 'en_route',
  'shadowfax/own-ndr-then-rts-delivered.json#SF100000022977JIF': 'en_route',
  'shiprocket/own-cancelled.json#1490812345614': 'origin',
  'shiprocket/own-ndr-rto-delhivery.json#1490812345612': 'origin',
  'shiprocket/postman-doc-track-awb-delivered-xpressbees.json#141123221084922': 'delivering_branch',
  'shiprocket/postman-doc-track-awbs-multi.json#788830567028': 'unknown',
  'shiprocket/postman-doc-track-awbs-multi.json#788829354408': 'unknown',
  'shiprocket/postman-doc-track-order-id.json#1091188857722': 'unknown',
  'shiprocket/postman-doc-track-shipment-picked-up-delhivery.json#1091188857722': 'unknown',
  'shreemaruti/own-cancelled.json#5012345701': 'origin',
  'shreemaruti/own-delivered-after-ndr.json#5012345678': 'delivering_branch',
  'shreemaruti/own-ndr-then-rto-delivered.json#5012345690': 'origin',
  'speedpost/own-JH-ndr-then-rto.json#JH123456789IN': 'origin',
  'xpressbees/own-aggregator-codes-refused-rto-delivered.json#141123221085017': 'origin',
  'xpressbees/own-cancelled.json#141123221084940': 'origin',
  'xpressbees/own-relayed-texts-ndr-rto.json#141123221084931': 'origin',
};

describe('positions on each sandbox renderer’s answers', () => {
  const T0 = Date.parse('2026-11-10T04:30:00Z');
  const at = (h: number) => T0 + h * HOUR_MS;
  // Mumbai → a relay hub → Kolkata's hub → out for delivery in Kolkata, as the network writes places.
  const steps = [
    storyStep('booked', at(0), 'Mumbai'),
    storyStep('picked_up', at(2), 'Mumbai'),
    storyStep('hub_in', at(5), 'Mumbai Hub'),
    storyStep('hub_out', at(9), 'Mumbai Hub'),
    storyStep('hub_in', at(20), 'Nagpur Central Hub'),
    storyStep('hub_out', at(24), 'Nagpur Central Hub'),
    storyStep('hub_in', at(40), 'Kolkata Hub'),
    storyStep('out_for_delivery', at(50), 'Kolkata'),
  ];
  const place = { city: 'Mumbai', state: 'Maharashtra', pincode: '400001' };
  const destination = { city: 'Kolkata', state: 'West Bengal', pincode: '700001' };
  const exampleAwb = new Map(product.config.carriers.map((c) => [c.slug, c.example_awb]));

  for (const renderer of RENDERERS) {
    it(`${renderer.slug}: origin, en route, the destination city, then the delivering branch`, async () => {
      const awb = exampleAwb.get(renderer.slug)!;
      const shipment = shipmentBuilder({ carrier: renderer.slug, awb, origin: place, destination, serviceType: 'surface', edd: null, cod: false } as never)(steps);
      const { record } = await fetchAndNormalize(ADAPTERS[renderer.slug]!, renderer, sandboxEndpoint(renderer.slug, 'http://sandbox.test'), shipment, at(51));
      const byTime = new Map(positionScansOf(record).map((s, i) => [s.ms, positionsOf(record)[i]]));
      const seen = steps.map((s) => byTime.get(s.at) ?? 'no scan');
      // Every renderer shows where the parcel is at pickup, in transit and out for delivery.
      expect(seen.filter((p) => p !== 'no scan').length, JSON.stringify(seen)).toBeGreaterThanOrEqual(5);
      // A carrier whose answer names neither end (Professional Couriers' text pages): nothing can be placed but
      // the branch that sent the parcel out.
      const expected: Position[] = record.destination === null
        ? [...Array(7).fill('unknown'), 'delivering_branch']
        : ['origin', 'origin', 'origin', 'origin', 'en_route', 'en_route', 'destination_city', 'delivering_branch'];
      seen.forEach((p, i) => { if (p !== 'no scan') expect(p, `${steps[i]!.kind} at ${steps[i]!.location}`).toBe(expected[i]); });
    });
  }
});
