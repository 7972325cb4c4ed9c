import { describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../time/index.ts';
import { istDayStartMs } from '../time/ist-day.ts';
import { bookingOf, estimateOf, shipDateProblem, type EstimateRequest } from './estimate.ts';
import { buildModel, type DeliveredShipment } from './model.ts';
import type { PlaceLookup } from './types.ts';
import { WorkdayIndex } from './workdays.ts';

const calendar = loadCalendar();
const workdays = new WorkdayIndex(calendar);
/** Thursday 2026-11-19, 12:00 IST. */
const NOW = Date.parse('2026-11-19T12:00:00+05:30');
const places: PlaceLookup = {
  stateOf: (pin) => ({ '110': 'DL', '560': 'KA' } as Record<string, string>)[pin.slice(0, 3)] ?? null,
  zoneOf: () => 'rest_of_india',
};

/** Delivered shipments of one carrier and service type, booked over the 60 days before NOW. */
function shipments(carrier: string, serviceType: string | null, count: number, transitHours: (i: number) => number): DeliveredShipment[] {
  return Array.from({ length: count }, (_, i) => {
    const booked = NOW - 60 * DAY_MS + (i * 50 * DAY_MS) / count;
    const pickup = booked + 10 * HOUR_MS;
    const delivered = pickup + transitHours(i) * HOUR_MS;
    return {
      mode: 'test', carrier, serviceType, originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
      deliveredMs: delivered, seed: i * 7919 + carrier.length,
      episodes: [
        { stage: 'awaiting_pickup', enteredMs: booked, leftMs: pickup },
        { stage: 'in_transit', enteredMs: pickup, leftMs: delivered - 3 * HOUR_MS },
        { stage: 'out_for_delivery', enteredMs: delivered - 3 * HOUR_MS, leftMs: delivered },
      ],
    } satisfies DeliveredShipment;
  });
}

const model = buildModel([
  ...shipments('delhivery', 'Surface', 120, (i) => 60 + (i % 5) * 12),
  ...shipments('bluedart', 'express', 120, (i) => 20 + (i % 3) * 8),
  ...shipments('bluedart', 'surface', 120, (i) => 70 + (i % 4) * 10),
  // Too few for any level: no basis.
  ...shipments('dtdc', null, 20, () => 48),
], { modelAtMs: NOW, windowDays: 90, places, workdays });

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
    const answer = estimateOf(model, places, workdays, request());
    expect(answer.estimates.map((e) => [e.carrier, e.service_type])).toEqual([['bluedart', 'express'], ['bluedart', 'surface'], ['delhivery', 'surface']]);
    for (const e of answer.estimates) {
      const p = model.predict({
        mode: 'test', carrier: e.carrier, serviceType: e.service_type, originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
        stage: 'awaiting_pickup', stageEnteredMs: NOW - 5 * MINUTE_MS, asOfMs: NOW, eddMs: null,
      })!;
      expect(e).toEqual({ carrier: e.carrier, service_type: e.service_type, delivery_date: p.delivery_date, window: p.window, basis: p.basis });
      expect(e.basis).toMatchObject({ stage: 'awaiting_pickup', level: 'lane', sample_size: 120 });
    }
    // bluedart express is the fast one here.
    expect(answer.fastest).toBe('bluedart');
    expect(answer.estimates[0]!.delivery_date < answer.estimates[2]!.delivery_date).toBe(true);
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
