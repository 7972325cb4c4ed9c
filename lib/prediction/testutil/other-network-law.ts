/**
 * The second network's laws, one function each: how a booking is picked up, how long the line haul
 * runs, where a scan on the way is, how the last mile delivers, when a destination closes unannounced.
 * The generator (other-network.ts) draws its shipments with them; the bench's floor
 * (bench/prediction-law-floor.ts) draws from the same laws to find the best prediction any poll allows.
 * The delivery model never reads them (eslint keeps lib/prediction's own code off testutil).
 */
import { DAY_MS, HOUR_MS, IST_OFFSET_MS } from '../../time/index.ts';
import { dayNumberOf } from '../workdays.ts';

export type Random = () => number;
/** A day number's predicate (IST days since the epoch, as `dayNumberOf`). */
export type DayTest = (day: number) => boolean;
/** Where a scan was: the origin's hub, a relay, the destination state's hub, the destination's hub or its branch. */
export type Where = 'origin' | 'relay' | 'state' | 'hub' | 'branch';
export type LastMileKind = 'ofd' | 'delivered' | 'failed' | 'rto' | 'rtoDone';
export interface LawScan<K extends string = LastMileKind> { ms: number; kind: K; where: Where }

/** A scan before this share of the haul is at the origin's hub; after the next, at the destination state's hub. */
export const ORIGIN_SHARE = 0.3;
export const STATE_SHARE = 0.75;

export const istHour = (day: number, hour: number) => day * DAY_MS - IST_OFFSET_MS + hour * HOUR_MS;

function normal(r: Random): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

/** Pickup: the next working day at the origin (sometimes the one after), in the afternoon. */
export function pickupOf(r: Random, bookedMs: number, workingAtOrigin: DayTest): { day: number; ms: number } {
  let day = dayNumberOf(bookedMs) + 1;
  while (!workingAtOrigin(day)) day++;
  if (r() < 0.2) { day++; while (!workingAtOrigin(day)) day++; }
  return { day, ms: istHour(day, 13 + 6 * r()) };
}

/** Line haul in hours: log-normal around the lane's typical time, with a slow component (missed connections). */
export function haulHoursOf(r: Random, typicalHours: number): number {
  const haul = typicalHours * Math.exp(0.3 * normal(r));
  return r() < 0.12 ? haul * (1.7 + 1.5 * r()) : haul;
}

/** Where a scan at this share of the haul is: the origin's hub first, a relay between states, the destination state's hub near the end. */
export function whereOnTheWay(share: number, sameCity: boolean, destinationHasStateHub: boolean): Where {
  if (sameCity || share < ORIGIN_SHARE) return 'origin';
  return share > STATE_SHARE && destinationHasStateHub ? 'state' : 'relay';
}

/**
 * The last mile from the arrival at the destination's hub: out for delivery on the first deliverable
 * day (the arrival's own before 07:00 IST), a failed attempt more often for cash on delivery,
 * another try a day or two later, returned after the third failure.
 */
export function lastMileOf(r: Random, arrivalMs: number, deliverable: DayTest): { scans: LawScan[]; delivered: boolean } {
  const scans: LawScan[] = [];
  let day = dayNumberOf(arrivalMs) + (((arrivalMs + IST_OFFSET_MS) % DAY_MS) / HOUR_MS < 7 ? 0 : 1);
  const cod = r() < 0.45;
  for (let failures = 0; ;) {
    while (!deliverable(day)) day++;
    const ofd = istHour(day, 8 + 2.5 * r());
    scans.push({ ms: ofd, kind: 'ofd', where: 'branch' });
    if (r() < (cod ? 0.72 : 0.88)) {
      scans.push({ ms: ofd + (1 + 7 * r()) * HOUR_MS, kind: 'delivered', where: 'branch' });
      return { scans, delivered: true };
    }
    scans.push({ ms: ofd + (3 + 6 * r()) * HOUR_MS, kind: 'failed', where: 'branch' });
    if (++failures >= 3) {
      const rtoMs = ofd + 30 * HOUR_MS;
      scans.push({ ms: rtoMs, kind: 'rto', where: 'branch' }, { ms: rtoMs + (3 + 3 * r()) * DAY_MS, kind: 'rtoDone', where: 'origin' });
      return { scans, delivered: false };
    }
    day += r() < 0.7 ? 1 : 2;
  }
}

/** Unannounced closures of one destination: a stretch of 2-3 days per 30 days of history, anywhere in it. */
export function closedDaysOf(r: Random, firstDay: number, days: number): number[] {
  const closed: number[] = [];
  for (let i = 0; i < Math.ceil(days / 30); i++) {
    const first = firstDay + Math.floor(r() * days);
    const length = 2 + Math.floor(r() * 2);
    for (let d = 0; d < length; d++) closed.push(first + d);
  }
  return closed;
}
