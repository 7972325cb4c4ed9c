import { describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { normalizePoll } from '../normalize/index.ts';
import { seededRandom } from '../random/seeded-random.ts';
import { product } from '../testutil/product.ts';
import { DAY_MS, HOUR_MS } from '../time/index.ts';
import { addDays, istDayOf, istDayStartMs } from '../time/ist-day.ts';
import { etaChangeOf, ETA_CHANGE_MIN_INTERVAL_MS } from '../push/change.ts';
import { backtest } from './backtest.ts';
import { loadPlaces } from '../places/index.ts';
import { placeLookupOf } from './places.ts';
import { K_SLOTS, rankCell, windowAt } from './cells.ts';
import { buildModel, chooseDetail, type DeliveredShipment } from './model.ts';
import { queryOf } from './records.ts';
import { otherNetworkPolls } from './testutil/other-network.ts';
import { NO_PLACES, type PlaceLookup, type PredictionQuery } from './types.ts';
import type { StageEpisode } from './episodes.ts';
import { WorkdayIndex } from './workdays.ts';
import type { TrackingRecord } from '../schemas/index.ts';

const calendar = loadCalendar();
const workdays = new WorkdayIndex(calendar);
const MODEL_AT = Date.parse('2026-06-30T12:00:00+05:30');

/** A seeded generator of the tests' own shipments. */
const rng = seededRandom;

interface Spec { carrier?: string; origin?: string; destination?: string; state?: string | null; transitHours: () => number; count: number; seed: number }

/** Delivered shipments picked up at random times over the 60 days before the model. */
function shipments(spec: Spec): DeliveredShipment[] {
  const r = rng(spec.seed);
  const out: DeliveredShipment[] = [];
  for (let i = 0; i < spec.count; i++) {
    const pickup = MODEL_AT - 60 * DAY_MS + r() * 50 * DAY_MS;
    const delivered = pickup + spec.transitHours() * HOUR_MS;
    const ofd = delivered - 3 * HOUR_MS;
    out.push({
      mode: 'live', carrier: spec.carrier ?? 'delhivery', serviceType: 'surface',
      originPincode: spec.origin ?? '110001', destinationPincode: spec.destination ?? '560001', destinationState: spec.state ?? 'KA',
      deliveredMs: delivered, seed: spec.seed * 100_000 + i,
      episodes: [
        { stage: 'awaiting_pickup', enteredMs: pickup - 20 * HOUR_MS, leftMs: pickup },
        { stage: 'in_transit', enteredMs: pickup, leftMs: ofd },
        { stage: 'out_for_delivery', enteredMs: ofd, leftMs: delivered },
      ],
    });
  }
  return out;
}

/**
 * A shipment's in-transit stay split where it reached en route and the destination city's hub (its
 * clock restarts at each new place, as records.ts splitAtNewPlaces reads a delivered record), with those scans.
 */
function placedEnRoute(d: DeliveredShipment, enRouteMs: number, arrivedMs: number): DeliveredShipment {
  const [booked, transit, out] = d.episodes as [StageEpisode, StageEpisode, StageEpisode];
  const episodes = [booked, { ...transit, leftMs: enRouteMs }, { ...transit, enteredMs: enRouteMs, leftMs: arrivedMs }, { ...transit, enteredMs: arrivedMs }, out];
  return { ...d, episodes, scanMs: [transit.enteredMs, enRouteMs, arrivedMs, transit.leftMs!], scanPositions: [1, 2, 4, 5] };
}

/** A delhivery shipment Delhi → Bengaluru booked, picked up and delivered at these instants (out for delivery 3 h before). */
function bookedShipment(bookedMs: number, pickupMs: number, deliveredMs: number, seed: number): DeliveredShipment {
  return {
    mode: 'live', carrier: 'delhivery', serviceType: 'surface', originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
    deliveredMs, seed,
    episodes: [
      { stage: 'awaiting_pickup', enteredMs: bookedMs, leftMs: pickupMs },
      { stage: 'in_transit', enteredMs: pickupMs, leftMs: deliveredMs - 3 * HOUR_MS },
      { stage: 'out_for_delivery', enteredMs: deliveredMs - 3 * HOUR_MS, leftMs: deliveredMs },
    ],
  };
}

/** Delhi and Karnataka, one zone: the two ends of `bookedShipment`. */
const DELHI_KARNATAKA: PlaceLookup = { stateOf: (pin) => ({ '110': 'DL', '560': 'KA' } as Record<string, string>)[pin.slice(0, 3)] ?? null, zoneOf: () => 'rest_of_india' };

function query(overrides: Partial<PredictionQuery>): PredictionQuery {
  return {
    mode: 'live', carrier: 'delhivery', serviceType: 'surface', originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
    stage: 'in_transit', stageEnteredMs: MODEL_AT - 2 * HOUR_MS, asOfMs: MODEL_AT, eddMs: null, ...overrides,
  };
}

/**
 * Out for delivery at 09:00-11:00 IST in the 40 days before the model; a share of attempts fails and
 * the parcel goes out again the next working day.
 */
function outForDeliveryShipments(failShare: number, seed: number, carrier = 'delhivery'): DeliveredShipment[] {
  const r = rng(seed);
  const data: DeliveredShipment[] = [];
  for (let i = 0; i < 1200; i++) {
    const day = istDayStartMs(addDays(istDayOf(MODEL_AT - 50 * DAY_MS), Math.floor(r() * 40)));
    const ofd = day + (9 + 2 * r()) * HOUR_MS;
    if (!calendar.isWorkingDay(istDayOf(ofd), { carrier, state: 'KA' })) continue;
    const fails = r() < failShare;
    let next = addDays(istDayOf(ofd), 1);
    while (!calendar.isWorkingDay(next, { carrier, state: 'KA' })) next = addDays(next, 1);
    const attemptAt = ofd + (2 + 4 * r()) * HOUR_MS;
    const secondOfd = istDayStartMs(next) + (9 + 2 * r()) * HOUR_MS;
    const delivered = fails ? secondOfd + 3 * HOUR_MS : attemptAt;
    data.push({
      mode: 'live', carrier, serviceType: 'surface', originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
      deliveredMs: delivered, seed: seed * 10_000 + i,
      episodes: fails
        ? [{ stage: 'out_for_delivery', enteredMs: ofd, leftMs: attemptAt }, { stage: 'delivery_attempted', enteredMs: attemptAt, leftMs: secondOfd },
          { stage: 'out_for_delivery', enteredMs: secondOfd, leftMs: delivered }]
        : [{ stage: 'out_for_delivery', enteredMs: ofd, leftMs: delivered }],
    });
  }
  return data;
}

describe('delivery model', () => {
  it('conditions on survivors: 3 days in transit on a 2-day lane gives a later window, not an earlier one', () => {
    const r = rng(1);
    // Mostly 2 days, a tail of slow ones (5-7 days): the slow tail is who is left after 3 days.
    const data = shipments({ count: 600, seed: 1, transitHours: () => (r() < 0.85 ? 40 + 16 * r() : 120 + 48 * r()) });
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    const pickup = MODEL_AT - 72 * HOUR_MS;
    // As of its pickup, the shipment was given the lane's usual 2 days …
    const fresh = model.predict(query({ stageEnteredMs: pickup, asOfMs: pickup + HOUR_MS }))!;
    // … 3 days later, still in transit, it is one of the slow ones: a later window, never one in the past.
    const late = model.predict(query({ stageEnteredMs: pickup }))!;
    // Without place names every scan is `unknown`: the cells of that position and the as-of time of day
    // (a third or so of the 600 each), then fewer survivors after 3 days.
    expect(fresh.basis).toMatchObject({ stage: 'in_transit', position: 'unknown' });
    expect(fresh.basis.sample_size).toBeGreaterThan(100);
    expect(late.basis.sample_size).toBeLessThan(fresh.basis.sample_size);
    expect(late.basis.sample_size).toBeLessThan(150);
    expect(late.delivery_date > fresh.delivery_date).toBe(true);
    // Its whole p80 window lies after the day a fresh one was given (the fresh window itself spans
    // the slow tail too: calibrated per stage and position over every time in stage, it holds more than 85 %).
    expect(late.window.p80[0] > fresh.delivery_date).toBe(true);
    // Survivors of 3 days here are the slow tail: its window reaches days past a 2-day journey's.
    expect(late.window.p90[1] >= addDays(istDayOf(MODEL_AT), 2)).toBe(true);
    expect(late.window.p80[0] >= istDayOf(MODEL_AT)).toBe(true);
  });

  it('never predicts a Sunday or a holiday for a carrier that rests on them', () => {
    const r = rng(2);
    const data = shipments({ count: 400, seed: 2, transitHours: () => 30 + 80 * r() });
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    let checked = 0;
    // Every as-of of a month, across holidays (Independence Day, 2026-08-15) and Sundays.
    for (let h = 0; h < 45 * 24; h += 7) {
      const asOf = Date.parse('2026-08-01T00:00:00+05:30') + h * HOUR_MS;
      const p = model.predict(query({ asOfMs: asOf, stageEnteredMs: asOf - 5 * HOUR_MS }))!;
      for (const day of [p.delivery_date, ...p.window.p80, ...p.window.p90]) {
        expect(calendar.isWorkingDay(day, { carrier: 'delhivery', state: 'KA' }), `${day} predicted`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(500);
    // The calendar does rest on those days (the test would prove nothing otherwise).
    expect(calendar.isWorkingDay('2026-08-15', { carrier: 'delhivery', state: 'KA' })).toBe(false);
    expect(calendar.isWorkingDay('2026-08-16', { carrier: 'delhivery', state: 'KA' })).toBe(false);
  });

  it('counts the line haul in calendar days: four days from a Monday’s pickup is the Friday, from a Friday’s the Tuesday', () => {
    // Every haul runs 95-97 h, whatever the weekday (trucks run on Sundays); delhivery delivers Monday to Saturday.
    const r = rng(17);
    const model = buildModel(shipments({ count: 900, seed: 17, transitHours: () => 95 + 2 * r() }), { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    // Asked an hour after a 14:00 pickup. Counted in working days, four of the seven pickup weekdays
    // (Wednesday to Saturday) span a Sunday and count 3: the cell's mode, which put Monday's parcel on Thursday.
    const asked = (pickup: string) => query({ asOfMs: Date.parse(`${pickup}T15:00:00+05:30`), stageEnteredMs: Date.parse(`${pickup}T14:00:00+05:30`) });
    expect(model.predict(asked('2026-06-29'))!.delivery_date).toBe('2026-07-03');
    expect(model.predict(asked('2026-06-26'))!.delivery_date).toBe('2026-06-30');
    // The probability of a day reads the same count: by Thursday hardly, by Friday most; by a Sunday what by its Saturday.
    expect(model.probabilityBy(asked('2026-06-29'), '2026-07-02')).toBeLessThan(0.2);
    expect(model.probabilityBy(asked('2026-06-29'), '2026-07-03')).toBeGreaterThan(0.8);
    expect(model.probabilityBy(asked('2026-06-26'), '2026-06-28')).toBe(model.probabilityBy(asked('2026-06-26'), '2026-06-27'));
    expect(model.probabilityBy(asked('2026-06-26'), '2026-06-25')).toBe(0);
  });

  it('falls back lane → state pair → zone → carrier, with each level’s sample size', () => {
    const places: PlaceLookup = {
      stateOf: (pin) => ({ '110': 'DL', '560': 'KA', '561': 'KA', '400': 'MH' } as Record<string, string>)[pin.slice(0, 3)] ?? null,
      zoneOf: (o, d) => (places.stateOf(o) === null || places.stateOf(d) === null ? null : o.startsWith('400') || d.startsWith('400') ? 'metro_to_metro' : 'rest_of_india'),
    };
    const r = rng(3);
    const t = () => 40 + 30 * r();
    const data = [
      ...shipments({ count: 40, seed: 31, transitHours: t }), // lane 110→560
      ...shipments({ count: 20, seed: 32, destination: '561001', transitHours: t }), // lane 110→561, same state pair
      ...shipments({ count: 35, seed: 33, origin: '400001', destination: '110001', state: 'DL', transitHours: t }), // MH→DL, zone metro_to_metro
    ];
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places, workdays });
    const at = (origin: string, destination: string) => model.predict(query({ originPincode: origin, destinationPincode: destination, stageEnteredMs: MODEL_AT - HOUR_MS }))?.basis;
    expect(at('110001', '560001')).toMatchObject({ level: 'lane', sample_size: 40 });
    // 20 on the lane: too few; DL → KA has 60.
    expect(at('110001', '561001')).toMatchObject({ level: 'state_pair', sample_size: 60 });
    // 400→560: no lane, no MH → KA data; the zone metro_to_metro has MH → DL's 35.
    expect(at('400001', '560099')).toMatchObject({ level: 'zone', sample_size: 35 });
    // Unknown places: the carrier's 95.
    expect(at('999001', '998001')).toMatchObject({ level: 'carrier', sample_size: 95 });
    // Another carrier: nothing learned, no prediction.
    expect(model.predict(query({ carrier: 'bluedart' }))).toBeNull();
  });

  it('conditions on where the parcel is, below the stage, and falls back past a position with under 30', () => {
    const r = rng(5);
    // In transit 60-100 h; the parcel reaches the destination city's hub 6-10 h before going out for delivery.
    const data = shipments({ count: 1200, seed: 5, transitHours: () => 60 + 40 * r() }).map((d) => {
      const transit = d.episodes[1]!;
      const arrived = transit.leftMs! - (6 + 4 * r()) * HOUR_MS;
      // En route 5-35 h after pickup, whatever the haul: here how long it took to get there tells nothing.
      return placedEnRoute(d, transit.enteredMs + (5 + 30 * r()) * HOUR_MS, arrived);
    });
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    // As of 10:00 IST, 70 h after pickup: en route for 40 h, or at the destination city's hub for 4.
    const asOf = Date.parse('2026-06-29T10:00:00+05:30');
    const ask = (position: PredictionQuery['position'], hoursHere = 70) =>
      model.predict(query({ asOfMs: asOf, stageEnteredMs: asOf - hoursHere * HOUR_MS, runEnteredMs: asOf - 70 * HOUR_MS, position }))!;
    const atCity = ask('destination_city', 4);
    const enRoute = ask('en_route', 40);
    expect(atCity.basis).toMatchObject({ position: 'destination_city', level: 'carrier' });
    // En route here the detail cells' modes (thinner, split by a pace that tells nothing) missed the
    // calibration days' deliveries more often than the stage's plain ones, so the build chose the plain cells there.
    expect(model.summary.detail['in_transit']).toContain('destination_city');
    expect(model.summary.detail['in_transit']).not.toContain('en_route');
    expect(enRoute.basis.position).toBeNull();
    // In the destination city in the morning: today or tomorrow; en route it is later and wider.
    expect(atCity.window.p80[1] <= addDays(istDayOf(asOf), 1)).toBe(true);
    expect(enRoute.delivery_date >= atCity.delivery_date).toBe(true);
    // A position the data never showed at that time (the origin, 70 h in): the plain cell, position null.
    const fallback = ask('origin');
    expect(fallback.basis.position).toBeNull();
    expect(fallback.basis.sample_size).toBeGreaterThan(atCity.basis.sample_size);
    // No position given (a caller of the earlier API): read as unknown, which these data never were.
    expect(model.predict(query({ asOfMs: asOf, stageEnteredMs: asOf - 70 * HOUR_MS }))!.basis.position).toBeNull();
  });

  it('en route, how long the parcel took to get there says how long its haul runs: a slow start, a later day', () => {
    const r = rng(13);
    // Half the hauls take 40-50 h, half 100-120 h (a missed connection); each reaches en route 40 % into its haul.
    const data = shipments({ count: 900, seed: 13, transitHours: () => (r() < 0.5 ? 40 + 10 * r() : 100 + 20 * r()) }).map((d) => {
      const transit = d.episodes[1]!;
      return placedEnRoute(d, transit.enteredMs + 0.4 * (transit.leftMs! - transit.enteredMs), transit.leftMs! - 6 * HOUR_MS);
    });
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    // Both en route for 5 h as of the same instant; one got there 18 h after pickup, the other 45 h.
    const asOf = Date.parse('2026-06-29T10:00:00+05:30');
    const ask = (hoursToHere: number) =>
      model.predict(query({ asOfMs: asOf, stageEnteredMs: asOf - 5 * HOUR_MS, runEnteredMs: asOf - (5 + hoursToHere) * HOUR_MS, position: 'en_route' }))!;
    const fast = ask(18);
    const slow = ask(45);
    expect(model.summary.detail['in_transit']).toContain('en_route');
    expect(fast.basis).toMatchObject({ position: 'en_route', level: 'carrier' });
    expect(slow.basis).toMatchObject({ position: 'en_route', level: 'carrier' });
    // The fast one has ~20 h of haul left (Tuesday), the slow one 45-75 h (Wednesday or Thursday).
    expect(fast.delivery_date).toBe('2026-06-30');
    expect(slow.delivery_date > fast.delivery_date).toBe(true);
    expect(slow.window.p80[1] > fast.window.p80[1]).toBe(true);
    // Without the pickup's time (a caller that does not know it) the pace is not guessed: the plain cells.
    const unknown = model.predict(query({ asOfMs: asOf, stageEnteredMs: asOf - 5 * HOUR_MS, position: 'en_route' }))!;
    expect(unknown.basis.position).toBeNull();
  });

  it('counts the booked stage by the day since booking and the as-of daypart: a booking after the pickup cut-off waits a day', () => {
    const r = rng(11);
    // Booked on a Monday to Wednesday (so no Sunday falls before the delivery): before 13:00 IST,
    // picked up that day at 17:00; later, the next day. Then 40-46 h in transit.
    const mondays = Array.from({ length: 8 }, (_, w) => addDays('2026-05-04', 7 * w));
    const data: DeliveredShipment[] = Array.from({ length: 2400 }, (_, i) => {
      const day = istDayStartMs(addDays(mondays[Math.floor(r() * mondays.length)]!, Math.floor(r() * 3)));
      const booked = day + (8 + 12 * r()) * HOUR_MS;
      const pickup = day + (booked - day < 13 * HOUR_MS ? 17 : 24 + 17) * HOUR_MS;
      return bookedShipment(booked, pickup, pickup + (40 + 6 * r()) * HOUR_MS, 11 * 100_000 + i);
    });
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places: DELHI_KARNATAKA, workdays });
    // No detail cells before pickup: the buckets hold the hour (DAY_BUCKETS).
    expect(model.summary.detail['awaiting_pickup']).toEqual([]);
    // Booked on Tuesday 2026-06-30 at 09:00 and at 17:00 IST: the later booking waits a day for its pickup.
    const booked = (hour: number, askedAfterHours = 1 / 6) => {
      const at = istDayStartMs('2026-06-30') + hour * HOUR_MS;
      return model.predict(query({ stage: 'awaiting_pickup', stageEnteredMs: at, asOfMs: at + askedAfterHours * HOUR_MS }))!;
    };
    expect(booked(9).delivery_date).toBe('2026-07-02');
    expect(booked(17).delivery_date).toBe('2026-07-03');
    // The evening's booking asked the next morning, 16 h on: still the same day, now a day nearer.
    expect(booked(17, 16).delivery_date).toBe('2026-07-03');
    expect(booked(17, 16).window.p80[1]! <= '2026-07-03').toBe(true);
    // The lane's own cell of that day and hour (a share of the deliveries); no place to name before pickup.
    expect(booked(9).basis).toMatchObject({ level: 'lane', position: null });
    expect(booked(9).basis.sample_size).toBeLessThan(data.length);
  });

  it('reads a rest day of the carrier at the origin as its own bucket: a Saturday night’s booking asked on Sunday waits for Monday’s pickup', () => {
    const r = rng(12);
    // Booked any day of eight weeks at 08:00-22:00 IST; picked up at 17:00 on the next working day of
    // delhivery in Delhi (not Sundays, not national holidays), the same day when booked before 13:00 on one.
    const pickupContext = workdays.contextOf('delhivery', 'DL');
    const data: DeliveredShipment[] = Array.from({ length: 3000 }, (_, i) => {
      const day = istDayStartMs(addDays('2026-05-01', Math.floor(r() * 56)));
      const booked = day + (8 + 14 * r()) * HOUR_MS;
      let pickupDay = Math.floor((day + 6 * HOUR_MS) / DAY_MS) + (booked - day < 13 * HOUR_MS ? 0 : 1);
      while (!workdays.isWorking(pickupContext, pickupDay)) pickupDay++;
      const pickup = istDayStartMs(istDayOf(pickupDay * DAY_MS)) + 17 * HOUR_MS;
      return bookedShipment(booked, pickup, pickup + (40 + 6 * r()) * HOUR_MS, 12 * 100_000 + i);
    });
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places: DELHI_KARNATAKA, workdays });
    const asked = (booked: string, asOf: string) =>
      model.predict(query({ stage: 'awaiting_pickup', stageEnteredMs: Date.parse(booked), asOfMs: Date.parse(asOf) }))!.delivery_date;
    // Saturday 2026-06-27 at 20:00, asked on Sunday morning: picked up Monday, delivered Wednesday.
    expect(asked('2026-06-27T20:00:00+05:30', '2026-06-28T09:00:00+05:30')).toBe('2026-07-01');
    // Monday 2026-06-22 at 20:00, asked on Tuesday morning (the same day since the booking and the same hour): picked up that day.
    expect(asked('2026-06-22T20:00:00+05:30', '2026-06-23T09:00:00+05:30')).toBe('2026-06-25');
  });

  it('chooses the detail cells unless 30+ calibration deliveries show the plain ones err less, by 3 standard errors', () => {
    // 40 deliveries, each with the detail way one day worse (weight 2): excess 80, √squares √160 ≈ 12.6.
    expect(chooseDetail(80, 40 * 4, 40)).toBe(false);
    // The same excess from one delivery's 80 and the rest even: within the noise.
    expect(chooseDetail(80, 80 * 80, 40)).toBe(true);
    // Detail better, or too few deliveries: detail.
    expect(chooseDetail(-80, 40 * 4, 40)).toBe(true);
    expect(chooseDetail(58, 29 * 4, 29)).toBe(true);
  });

  it('out for delivery: when attempts fail, the p90 window reaches the next delivery day; probabilityBy reads the same cell', () => {
    // One attempt in six fails.
    const data = outForDeliveryShipments(1 / 6, 6);
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    // Saturday 2026-06-27, 11:00 IST, an hour after going out: delhivery rests on Sunday, so the next delivery day is Monday.
    const asOf = Date.parse('2026-06-27T11:00:00+05:30');
    const q = query({ stage: 'out_for_delivery', stageEnteredMs: asOf - HOUR_MS, asOfMs: asOf });
    const p = model.predict(q)!;
    expect(p.delivery_date).toBe('2026-06-27');
    expect(p.window.p80).toEqual(['2026-06-27', '2026-06-27']);
    expect(p.window.p90).toEqual(['2026-06-27', '2026-06-29']);
    // P(delivered by the end of a day): none before today, most today, all by the next delivery day.
    expect(model.probabilityBy(q, '2026-06-26')).toBe(0);
    expect(model.probabilityBy(q, '2026-06-27')).toBeGreaterThan(0.7);
    expect(model.probabilityBy(q, '2026-06-27')).toBeLessThan(0.95);
    expect(model.probabilityBy(q, '2026-06-28')).toBe(model.probabilityBy(q, '2026-06-27'));
    expect(model.probabilityBy(q, '2026-06-29')).toBe(1);
    expect(model.predict({ ...q, eddMs: Date.parse('2026-06-27T20:00:00+05:30') })!.on_time_probability).toBe(model.probabilityBy(q, '2026-06-27'));
  });

  it('a window stops growing once its days hold the target: where the day itself holds 90 %, p90 is that day alone', () => {
    // One attempt in four fails at one carrier, one in twenty at another. Over both, more than 10 % of
    // deliveries miss their cell's first day, so calibration's p90 threshold takes in a second day;
    // the second carrier's day already holds 95 % and needs none.
    const data = [...outForDeliveryShipments(1 / 4, 7), ...outForDeliveryShipments(1 / 20, 8, 'dtdc')];
    const model = buildModel(data, { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    const asOf = Date.parse('2026-06-24T11:00:00+05:30');
    const sharp = query({ carrier: 'dtdc', stage: 'out_for_delivery', stageEnteredMs: asOf - HOUR_MS, asOfMs: asOf });
    const spread = { ...sharp, carrier: 'delhivery' };
    expect(model.predict(sharp)!.basis.level).toBe('carrier');
    expect(model.probabilityBy(sharp, '2026-06-24')).toBeGreaterThanOrEqual(0.9);
    expect(model.predict(sharp)!.window.p90).toEqual(['2026-06-24', '2026-06-24']);
    expect(model.probabilityBy(spread, '2026-06-24')).toBeLessThan(0.9);
    expect(model.predict(spread)!.window.p90).toEqual(['2026-06-24', '2026-06-25']);
    // The cap itself: a cell of 95 % on one day and 5 % on the next, at a threshold that reaches both.
    const counts = new Array<number>(K_SLOTS).fill(0);
    counts[1] = 950;
    counts[2] = 50;
    const ranked = rankCell(counts);
    expect(windowAt(ranked, 1000)).toEqual([1, 2]);
    expect(windowAt(ranked, 1000, 900)).toEqual([1, 1]);
    counts[1] = 860;
    counts[2] = 140;
    expect(windowAt(rankCell(counts), 1000, 900)).toEqual([1, 2]);
  });

  it('is null where the contract says null; on_time_probability null without an EDD', () => {
    const r = rng(4);
    const model = buildModel(shipments({ count: 100, seed: 4, transitHours: () => 30 + 40 * r() }), { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    for (const stage of ['delivered', 'rto_in_transit', 'rto_delivered', 'cancelled'] as const) expect(model.predict(query({ stage }))).toBeNull();
    expect(model.predict(query({}))!.on_time_probability).toBeNull();
    const edd = istDayStartMs(addDays(istDayOf(MODEL_AT), 3)) + 20 * HOUR_MS;
    const p = model.predict(query({ eddMs: edd }))!.on_time_probability!;
    expect(p).toBeGreaterThan(0.5);
    expect(model.predict(query({ eddMs: MODEL_AT - 3 * DAY_MS }))!.on_time_probability).toBe(0);
    // Under 30 deliveries at every level: null.
    const thin = buildModel(shipments({ count: 25, seed: 5, transitHours: () => 48 }), { modelAtMs: MODEL_AT, windowDays: 90, places: NO_PLACES, workdays });
    expect(thin.predict(query({}))).toBeNull();
  });

  it('reads a record’s stage and time in it from its events (a normalized poll)', () => {
    const polls = [...otherNetworkPolls({ shipments: 30, days: 10, seed: 9, calendar })];
    const moving = polls.map((p) => normalizePoll(p, product.rules)).find((r) => r.kind === 'found' && r.shipment.facts.stage === 'in_transit');
    if (moving?.kind !== 'found') throw new Error('no in-transit poll');
    const q = queryOf(moving.shipment.record, moving.shipment.facts, 'live', Date.parse(moving.shipment.record.last_polled_at), NO_PLACES)!;
    expect(q.stage).toBe('in_transit');
    expect(q.stageEnteredMs).toBe(Date.parse(moving.shipment.record.milestones.picked_up_at!));
  });
});

describe('backtest on a network unlike the sandbox', () => {
  it('holds p80/p90 coverage, and writes one line per poll at or after the split', async () => {
    const polls = [...otherNetworkPolls({ shipments: 4000, days: 60, seed: 11, calendar })];
    const splitMs = Date.parse('2026-03-01T00:00:00+05:30') + 45 * DAY_MS;
    const lines: unknown[] = [];
    const places = placeLookupOf(loadPlaces());
    const { summary } = await backtest(() => polls, { splitMs, rules: product.rules, places, workdays, windowDays: 90, onPrediction: (l) => lines.push(l) });
    expect(lines).toHaveLength(polls.filter((p) => Date.parse(p.polled_at) >= splitMs).length);
    expect(summary.polls_at_or_after_split).toBe(lines.length);
    const o = summary.overall;
    expect(o.predictions).toBeGreaterThan(2000);
    expect(o.p80_coverage!).toBeGreaterThanOrEqual(0.76);
    expect(o.p80_coverage!).toBeLessThanOrEqual(0.93);
    expect(o.p90_coverage!).toBeGreaterThanOrEqual(0.86);
    expect(o.p90_coverage!).toBeLessThanOrEqual(0.98);
    expect(summary.in_transit_predicted_share!).toBeGreaterThan(0.95);
    // In every stage with enough predictions to judge (bands for a modest history, not the bench's targets).
    const stages = Object.entries(summary.by_stage).filter(([, x]) => x.predictions >= 400);
    expect(stages.map(([stage]) => stage)).toEqual(expect.arrayContaining(['awaiting_pickup', 'in_transit', 'out_for_delivery']));
    for (const [stage, x] of stages) {
      expect(x.p80_coverage!, stage).toBeGreaterThanOrEqual(0.72);
      expect(x.p80_coverage!, stage).toBeLessThanOrEqual(0.95);
      expect(x.p90_coverage!, stage).toBeGreaterThanOrEqual(0.82);
      expect(x.p90_coverage!, stage).toBeLessThanOrEqual(0.99);
    }
    // Where the parcel is: in the destination city the window is sharper than at the origin.
    const byPosition = summary.in_transit_by_position;
    expect(byPosition.destination_city!.p80_median_width_days!).toBeLessThan(byPosition.origin!.p80_median_width_days!);
    expect(byPosition.destination_city!.exact_day_rate!).toBeGreaterThan(byPosition.origin!.exact_day_rate!);
    // The gain: the same data without the place names (every scan `unknown`; state pairs and zones kept).
    const blind = (await backtest(() => polls, { splitMs, rules: product.rules, places: { stateOf: places.stateOf, zoneOf: places.zoneOf }, workdays, windowDays: 90 })).summary;
    expect(o.exact_day_rate!).toBeGreaterThan(blind.overall.exact_day_rate! + 0.03);
    expect(o.mean_absolute_error_days!).toBeLessThan(blind.overall.mean_absolute_error_days!);
    // Better than the carrier's promise on its own ground: the exact day.
    expect(o.exact_day_rate!).toBeGreaterThan(o.carrier_edd.exact_day_rate!);
    expect(o.mean_absolute_error_days!).toBeLessThan(o.carrier_edd.mean_absolute_error_days!);
  }, 120_000);
});

describe('tracking.eta_changed', () => {
  const record = (day: string | null) => ({ insights: { prediction: day === null ? null : { delivery_date: day } } }) as unknown as TrackingRecord;
  it('is sent once when the day moves, not on repeats, at most once per 6 hours', () => {
    const t0 = MODEL_AT;
    let state = etaChangeOf({}, record('2026-07-02'), t0).next;
    expect(state.eta_date).toBe('2026-07-02');
    expect(etaChangeOf(state, record('2026-07-02'), t0 + HOUR_MS).changed).toBeNull();
    const moved = etaChangeOf(state, record('2026-07-03'), t0 + 2 * HOUR_MS);
    expect(moved.changed).toEqual({ previous: '2026-07-02' });
    state = moved.next;
    expect(etaChangeOf(state, record('2026-07-03'), t0 + 3 * HOUR_MS).changed).toBeNull();
    // Moves again within 6 h of the last event: held back, then told once the 6 h are over.
    const soon = etaChangeOf(state, record('2026-07-04'), t0 + 2 * HOUR_MS + ETA_CHANGE_MIN_INTERVAL_MS - 1);
    expect(soon.changed).toBeNull();
    const later = etaChangeOf(soon.next, record('2026-07-04'), t0 + 2 * HOUR_MS + ETA_CHANGE_MIN_INTERVAL_MS);
    expect(later.changed).toEqual({ previous: '2026-07-03' });
    // No prediction (delivered): nothing, and the day told is kept.
    expect(etaChangeOf(later.next, record(null), t0 + DAY_MS).changed).toBeNull();
  });
});
