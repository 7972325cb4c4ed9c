import { describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { DAY_MS, HOUR_MS } from '../time/index.ts';
import type { StageEpisode } from './episodes.ts';
import { BUCKET_HOURS, dayBucketOf, DAY_BUCKETS, observeShipment, readyDayOf, STAGE_LIST, unpack, WEIGHT_UNIT_MS, type DeliveredShipment } from './model.ts';
import { istDayOf } from '../time/ist-day.ts';
import { dayNumberOfText } from './workdays.ts';
import { NO_PLACES } from './types.ts';
import { WorkdayIndex } from './workdays.ts';

const workdays = new WorkdayIndex(loadCalendar());
const T = Date.parse('2026-05-04T09:00:00+05:30');

function shipment(episodes: StageEpisode[], deliveredMs: number): DeliveredShipment {
  return {
    mode: 'live', carrier: 'delhivery', serviceType: 'surface', originPincode: '110001', destinationPincode: '560001', destinationState: 'KA',
    deliveredMs, episodes, seed: 7,
  };
}

/** The booked stage's observations of a shipment booked at `bookedMs` and picked up at `pickupMs` (two days in transit after). */
function bookedObservations(bookedMs: number, pickupMs: number) {
  const delivered = pickupMs + 2 * DAY_MS;
  const observed = observeShipment(shipment([
    { stage: 'awaiting_pickup', enteredMs: bookedMs, leftMs: pickupMs },
    { stage: 'in_transit', enteredMs: pickupMs, leftMs: delivered },
  ], delivered), NO_PLACES, workdays);
  return Array.from({ length: observed.obs.length / 2 }, (_, i) => ({ asOfMs: observed.obs[2 * i]! * 1000, ...unpack(observed.obs[2 * i + 1]!) }))
    .filter((o) => o.stage === STAGE_LIST.indexOf('awaiting_pickup'));
}

describe('a delivered shipment’s observations, two numbers each', () => {
  it('packs the weight with the rest: a stay of 25 days in transit weighs each bucket by its time, the last one 7 days', () => {
    const delivered = T + 25 * DAY_MS + 3 * HOUR_MS;
    const observed = observeShipment(shipment([{ stage: 'in_transit', enteredMs: T, leftMs: delivered - 3 * HOUR_MS }], delivered), NO_PLACES, workdays);
    const codes = Array.from({ length: observed.obs.length / 2 }, (_, i) => unpack(observed.obs[2 * i + 1]!));
    // One observation per bucket (the stay outlasts them all), each bucket's width in half hours.
    expect(codes.map((c) => c.bucket)).toEqual(BUCKET_HOURS.map((_, b) => b));
    const widths = BUCKET_HOURS.map((h, b) => ((b + 1 < BUCKET_HOURS.length ? BUCKET_HOURS[b + 1]! : h + 7 * 24) - h) * HOUR_MS / WEIGHT_UNIT_MS);
    expect(codes.map((c) => c.weight)).toEqual(widths);
    expect(codes.at(-1)!.weight).toBe(336);
    expect(new Set(codes.map((c) => c.stage))).toEqual(new Set([STAGE_LIST.indexOf('in_transit')]));
    // Each as-of lies in its bucket, in whole seconds.
    codes.forEach((c, i) => expect(observed.obs[2 * i]! * 1000).toBeGreaterThanOrEqual(T + BUCKET_HOURS[c.bucket]! * HOUR_MS - 1000));
  });

  it('counts calendar days to the ready day until the destination city, the destination’s working days from there', () => {
    // Picked up Friday 2026-05-08 at 14:00 IST, in the destination city from Saturday 02:00, delivered
    // Tuesday 05-12 at 12:00; delhivery rests on Sundays in Karnataka.
    const pickup = Date.parse('2026-05-08T14:00:00+05:30');
    const delivered = Date.parse('2026-05-12T12:00:00+05:30');
    const s = { ...shipment([{ stage: 'in_transit', enteredMs: pickup, leftMs: delivered - 3 * HOUR_MS }], delivered), scanMs: [pickup, pickup + 12 * HOUR_MS], scanPositions: [1, 4] };
    const observed = observeShipment(s, NO_PLACES, workdays);
    const obs = Array.from({ length: observed.obs.length / 2 }, (_, i) => ({ day: istDayOf(observed.obs[2 * i]! * 1000), ...unpack(observed.obs[2 * i + 1]!) }));
    // Friday afternoon at the origin: 4 calendar days to Tuesday (working days would count 3, the Sunday out).
    expect(obs[0]).toMatchObject({ day: '2026-05-08', position: 1, k: 4 });
    // Saturday in the destination city: the working days ahead, Monday and Tuesday (calendar days: 3).
    expect(obs.find((o) => o.position === 4 && o.day === '2026-05-09')).toMatchObject({ k: 2 });
    // The ready day of a Monday's delivery is the Sunday before it (ready on Saturday night or on Sunday, the same Monday); of a Tuesday's, the Tuesday.
    const context = workdays.contextOf('delhivery', 'KA');
    expect(readyDayOf(workdays, context, dayNumberOfText('2026-05-11'))).toBe(dayNumberOfText('2026-05-10'));
    expect(readyDayOf(workdays, context, dayNumberOfText('2026-05-12'))).toBe(dayNumberOfText('2026-05-12'));
  });

  it('learns from the first 16 episodes of a journey, and numbers them 0 to 15', () => {
    // Out for delivery and a failed attempt, ten times over: 20 episodes of 6 hours.
    const episodes: StageEpisode[] = Array.from({ length: 20 }, (_, i) => ({
      stage: i % 2 === 0 ? 'out_for_delivery' : 'delivery_attempted', enteredMs: T + i * 6 * HOUR_MS, leftMs: T + (i + 1) * 6 * HOUR_MS,
    }));
    const observed = observeShipment(shipment(episodes, T + 120 * HOUR_MS), NO_PLACES, workdays);
    const seen = new Set(Array.from({ length: observed.obs.length / 2 }, (_, i) => unpack(observed.obs[2 * i + 1]!).episode));
    expect(seen).toEqual(new Set(Array.from({ length: 16 }, (_, i) => i)));
  });

  it('counts the booked stage in days since the booking × the as-of daypart (before 11:00, to 16:00, after), then one bucket from the fourth day', () => {
    // Booked Monday 09:00 IST, picked up Thursday 14:00 IST: every day bucket, the last from Thursday 00:00.
    const pickup = T + 3 * DAY_MS + 5 * HOUR_MS;
    const booked = bookedObservations(T, pickup);
    expect(booked.map((o) => o.bucket)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Each as-of lies in its bucket, weighed by the bucket's time in the stage: Monday 09:00-11:00 is 2 h, the rest of the day 5 h and 8 h.
    for (const o of booked) expect(dayBucketOf(T, o.asOfMs, false)).toBe(o.bucket);
    expect(booked.slice(0, 4).map((o) => o.weight * WEIGHT_UNIT_MS / HOUR_MS)).toEqual([2, 5, 8, 11]);
    expect(booked.at(-1)!.weight * WEIGHT_UNIT_MS / HOUR_MS).toBe(14);
    // A lookup reads the same buckets: the booking's evening, the next morning, the fourth day.
    expect(dayBucketOf(T, T + 8 * HOUR_MS, false)).toBe(2);
    expect(dayBucketOf(T, T + DAY_MS, false)).toBe(3);
    expect(dayBucketOf(T, T + 6 * DAY_MS, false)).toBe(9);
  });

  it('a rest day of the carrier at the origin is one bucket of its own, whichever day since the booking it is', () => {
    // Booked Saturday 2026-05-09 at 18:00 IST, picked up Monday at 15:00: delhivery does not pick up on Sundays.
    const saturday = Date.parse('2026-05-09T18:00:00+05:30');
    const booked = bookedObservations(saturday, saturday + 45 * HOUR_MS);
    const rest = DAY_BUCKETS - 1;
    // Saturday evening (day 0, after 16:00), Sunday whole (24 h, one observation), Monday morning and afternoon (day 2).
    expect(booked.map((o) => o.bucket)).toEqual([2, rest, 6, 7]);
    expect(booked.map((o) => o.weight * WEIGHT_UNIT_MS / HOUR_MS)).toEqual([6, 24, 11, 4]);
    expect(dayBucketOf(saturday, saturday + 16 * HOUR_MS, true)).toBe(rest);
    // Booked on Friday 2026-10-02 (Gandhi Jayanti, no pickups) at 18:00; Saturday works, Sunday rests;
    // picked up Monday. One observation per bucket: the second run of rest days (Sunday) is not observed.
    const holiday = Date.parse('2026-10-02T18:00:00+05:30');
    expect(bookedObservations(holiday, holiday + 69 * HOUR_MS).map((o) => o.bucket)).toEqual([rest, 3, 4, 5, 9]);
    // From the fourth day on, the one later bucket, rest day or not.
    expect(dayBucketOf(saturday, saturday + 4 * DAY_MS, true)).toBe(9);
  });

});
