import { describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../time/index.ts';
import { istDayStartMs } from '../time/ist-day.ts';
import { bookingOf, estimateOf, shipDateProblem, type EstimateRequest } from './estimate.ts';
import { buildModel, levelKeys, type DeliveredShipment } from './model.ts';
import { ServedStates } from './served.ts';
import type { PlaceLookup } from './types.ts';
import { WorkdayIndex } from './workdays.ts';

const calendar = loadCalendar();
const workdays = new WorkdayIndex(calendar);
/** Thursday 2026-11-19, 12:00 IST. */
const NOW = Date.parse('2026-11-19T12:00:00+05:30');
const places: PlaceLookup = {
  stateOf: (pin) => ({ '110': 'DL', '560': 'KA', '400': 'MH', '799': 'TR' } as Record<string, string>)[pin.slice(0, 3)] ?? null,
  zoneOf: () => 'rest_of_india',
};

/** Delivered shipments of one carrier and service type, booked over the 60 days before NOW. */
function shipments(
  carrier: string, serviceType: string | null, count: number, transitHours: (i: number) => number, destinationPincode = '560001',
): DeliveredShipment[] {
  return Array.from({ length: count }, (_, i) => {
    const booked = NOW - 60 * DAY_MS + (i * 50 * DAY_MS) / count;
    const pickup = booked + 10 * HOUR_MS;
    const delivered = pickup + transitHours(i) * HOUR_MS;
    return {
      mode: 'test', carrier, serviceType, originPincode: '110001', destinationPincode, destinationState: places.stateOf(destinationPincode),
      deliveredMs: delivered, seed: i * 7919 + carrier.length,
      episodes: [
        { stage: 'awaiting_pickup', enteredMs: booked, leftMs: pickup },
        { stage: 'in_transit', enteredMs: pickup, leftMs: delivered - 3 * HOUR_MS },
        { stage: 'out_for_delivery', enteredMs: delivered - 3 * HOUR_MS, leftMs: delivered },
      ],
    } satisfies DeliveredShipment;
  });
}

const history = [
  ...shipments('delhivery', 'Surface', 120, (i) => 60 + (i % 5) * 12),
  ...shipments('bluedart', 'express', 120, (i) => 20 + (i % 3) * 8),
  ...shipments('bluedart', 'surface', 120, (i) => 70 + (i % 4) * 10),
  // Too few for any level: no basis.
  ...shipments('dtdc', null, 20, () => 48),
  // A regional carrier, faster than all, that only ever delivered into Maharashtra: elsewhere its
  // figures are its zone's (every pair is one zone here), not the route's.
  ...shipments('shreemaruti', null, 120, (i) => 12 + (i % 2) * 6, '400001'),
];
const model = buildModel(history, { modelAtMs: NOW, windowDays: 90, places, workdays });
/** The served states as the embedded book reads them: the history's state-pair keys. */
const served = ServedStates.fromStateKeys(history.map((s) => levelKeys(s.mode, s.carrier, s.serviceType, s.originPincode, s.destinationPincode, places)[1]));

const request = (overrides: Partial<EstimateRequest> = {}): EstimateRequest => ({
  mode: 'test', originPincode: '110001', destinationPincode: '560001', shipDate: '2026-11-19', carrier: null, serviceType: null, nowMs: NOW, ...overrides,
});

describe('estimates before shipping', () => {
  it('accepts real days from yesterday to 90 days ahead (IST), and nothing else', () => {
    for (const day of ['2026-11-18', '2026-11-19', '2027-02-17']) expect(shipDateProblem(day, NOW), day).toBeNull();
    for (const day of ['2026-11-17', '2027-02-18', '2026-02-30', '2026-11-31', '2026-1-19', '19-11-2026', '']) expect(shipDateProblem(day, NOW), day).not.toBeNull();
    // At 00:30 IST on the 20th (19:00 UTC on the 19th) "today" is already the 20th in India.
    expect(shipDateProblem('2026-11-18', Date.parse('2026-11-20T00:30:00+05:30'))).not.toBeNull();
  });

  it('books on the carrier’s first working day at the origin: now today, else that day’s start', () => {
    expect(bookingOf(workdays, 'delhivery', 'DL', '2026-11-19', NOW)).toEqual({ enteredMs: NOW, asOfMs: NOW });
    const monday = istDayStartMs('2026-11-23');
    // Sunday (delhivery rests) → Monday; Guru Nanak Jayanti (2026-11-24, every state) → Wednesday.
    expect(bookingOf(workdays, 'delhivery', 'DL', '2026-11-22', NOW)).toEqual({ enteredMs: monday, asOfMs: monday });
    expect(bookingOf(workdays, 'delhivery', 'DL', '2026-11-24', NOW)).toEqual({ enteredMs: istDayStartMs('2026-11-25'), asOfMs: istDayStartMs('2026-11-25') });
    // ekart picks up on Sundays.
    expect(bookingOf(workdays, 'ekart', 'DL', '2026-11-22', NOW).enteredMs).toBe(istDayStartMs('2026-11-22'));
    // Yesterday: booked at its start, asked as of now.
    expect(bookingOf(workdays, 'delhivery', 'DL', '2026-11-18', NOW)).toEqual({ enteredMs: istDayStartMs('2026-11-18'), asOfMs: NOW });
  });

  it('answers per carrier and learned service type from the booked stage; the model’s own lookup gives the same figures', () => {
    const answer = estimateOf(model, places, workdays, request(), served);
    expect(answer.estimates.map((e) => [e.carrier, e.service_type])).toEqual([['bluedart', 'express'], ['bluedart', 'surface'], ['delhivery', 'surface']]);
    for (const e of answer.estimates) {
      const p = model.predict({
        mode: 'test', carrier: e.carrier, serviceType: e.service_type, originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
        stage: 'awaiting_pickup', stageEnteredMs: NOW - 5 * MINUTE_MS, asOfMs: NOW, eddMs: null,
      })!;
      expect(e).toEqual({ carrier: e.carrier, service_type: e.service_type, delivery_date: p.delivery_date, window: p.window, basis: p.basis });
      // The lane's cell of the booking's day at NOW's daypart: the bookings still waiting then, not all 120.
      expect(e.basis).toMatchObject({ stage: 'awaiting_pickup', level: 'lane' });
      expect(e.basis.sample_size).toBeGreaterThanOrEqual(30);
      expect(e.basis.sample_size).toBeLessThan(120);
    }
    // bluedart express is the fast one here.
    expect(answer.fastest).toBe('bluedart');
    expect(answer.estimates[0]!.delivery_date < answer.estimates[2]!.delivery_date).toBe(true);
  });

  it('fastest is named only from a lane or state-pair basis: a faster carrier known only from its zone is listed, not named', () => {
    // Without the served rule, shreemaruti answers Karnataka from its zone figures: the earliest day.
    const answer = estimateOf(model, places, workdays, request());
    const regional = answer.estimates.find((e) => e.carrier === 'shreemaruti');
    expect(regional?.basis.level).toBe('zone');
    expect(answer.estimates.every((e) => regional!.delivery_date <= e.delivery_date)).toBe(true);
    expect(answer.fastest).toBe('bluedart');
    // Only zone figures at all: no fastest.
    expect(estimateOf(model, places, workdays, request({ carrier: 'shreemaruti' }))).toMatchObject({ estimates: [{ basis: { level: 'zone' } }], fastest: null });
    // On its own lane it is the fastest.
    const home = estimateOf(model, places, workdays, request({ destinationPincode: '400001' }), served);
    expect(home.estimates.find((e) => e.carrier === 'shreemaruti')?.basis.level).toBe('lane');
    expect(home.fastest).toBe('shreemaruti');
  });

  it('a carrier with no delivery into the destination state in the window is not offered there', () => {
    expect(served.serves('test', 'shreemaruti', 'MH')).toBe(true);
    expect(served.serves('test', 'shreemaruti', 'KA')).toBe(false);
    expect(served.serves('live', 'bluedart', 'KA')).toBe(false);
    const karnataka = estimateOf(model, places, workdays, request(), served);
    expect(karnataka.estimates.map((e) => e.carrier)).not.toContain('shreemaruti');
    expect(estimateOf(model, places, workdays, request({ carrier: 'shreemaruti' }), served)).toEqual({
      origin_pincode: '110001', destination_pincode: '560001', ship_date: '2026-11-19', estimates: [], fastest: null,
    });
    // Tripura: nobody delivered there; every carrier has zone figures, none is offered.
    expect(estimateOf(model, places, workdays, request({ destinationPincode: '799001' }), served)).toMatchObject({ estimates: [], fastest: null });
    // A destination whose state the places directory does not know: the rule cannot be read, carriers stay.
    const unknown = estimateOf(model, places, workdays, request({ destinationPincode: '999001' }), served);
    expect(unknown.estimates.map((e) => e.carrier)).toContain('shreemaruti');
    expect(ServedStates.NONE.serves('test', 'bluedart', 'KA')).toBe(false);
  });

  it('narrows by carrier and service type; another mode, a thin carrier or an unseen service type give none', () => {
    expect(estimateOf(model, places, workdays, request({ carrier: 'delhivery' })).estimates.map((e) => e.service_type)).toEqual(['surface']);
    expect(estimateOf(model, places, workdays, request({ serviceType: ' SURFACE ' })).estimates.map((e) => e.carrier)).toEqual(['bluedart', 'delhivery']);
    expect(estimateOf(model, places, workdays, request({ carrier: 'dtdc' }))).toMatchObject({ estimates: [], fastest: null });
    expect(estimateOf(model, places, workdays, request({ carrier: 'delhivery', serviceType: 'express' })).estimates).toEqual([]);
    expect(estimateOf(model, places, workdays, request({ mode: 'live' }))).toMatchObject({ estimates: [], fastest: null });
  });

  it('a later pickup never gives an earlier delivery; a rest day answers as the next working day', () => {
    const at = (shipDate: string) => estimateOf(model, places, workdays, request({ carrier: 'delhivery', shipDate })).estimates[0]!;
    expect(at('2026-11-22')).toEqual(at('2026-11-23'));
    expect(at('2026-11-23').delivery_date >= at('2026-11-19').delivery_date).toBe(true);
    expect(at('2026-11-25').delivery_date > at('2026-11-23').delivery_date).toBe(true);
  });
});
