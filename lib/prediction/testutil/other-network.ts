/**
 * A second carrier network for tests and the bench: the delivery model must learn, not know. It
 * shares nothing with the sandbox's network model (lib/sandbox, lib/network, config/sandbox): its
 * own made-up lanes between other cities, log-normal line-haul with a slow mixture component, a
 * failed-attempt process, returns, silent losses and unannounced closures of a destination's last
 * mile (days the calendar does not know). Only the product's holiday calendar is shared: carriers
 * really rest on those days. It writes carrier_poll.v1 polls, several per shipment as a poller
 * would, with the scan texts the mapping rules read, and scan locations in its carriers' own
 * wording that move from the origin's hub through relay cities and a hub of the destination's
 * state to the destination's hub and its delivering branch (the position the model learns from).
 * Its laws, one function each, are in other-network-law.ts.
 */
import type { DeliveryCalendar } from '../../calendar/index.ts';
import type { CarrierPoll, RawScan } from '../../schemas/index.ts';
import { DAY_MS, HOUR_MS } from '../../time/index.ts';
import { dayNumberOf, dayText } from '../workdays.ts';
import { closedDaysOf, haulHoursOf, istHour, lastMileOf, pickupOf, whereOnTheWay, type LawScan, type Where } from './other-network-law.ts';
import { seededRandom } from '../../random/seeded-random.ts';

/** A place, with another city of its state whose hub parcels for it pass (null: none). */
export interface Place { pincode: string; city: string; state: string; stateHub: string | null }
const PLACES: readonly Place[] = [
  { pincode: '171001', city: 'Shimla', state: 'Himachal Pradesh', stateHub: 'Solan' },
  { pincode: '831001', city: 'Jamshedpur', state: 'Jharkhand', stateHub: 'Ranchi' },
  { pincode: '452001', city: 'Indore', state: 'Madhya Pradesh', stateHub: 'Ujjain' },
  { pincode: '641001', city: 'Coimbatore', state: 'Tamil Nadu', stateHub: 'Salem' },
  { pincode: '160017', city: 'Chandigarh', state: 'Chandigarh', stateHub: null },
  { pincode: '751001', city: 'Bhubaneswar', state: 'Odisha', stateHub: 'Cuttack' },
  { pincode: '395003', city: 'Surat', state: 'Gujarat', stateHub: 'Vadodara' },
  { pincode: '795001', city: 'Imphal', state: 'Manipur', stateHub: 'Thoubal' },
  { pincode: '520001', city: 'Vijayawada', state: 'Andhra Pradesh', stateHub: 'Guntur' },
];
/** Relay hubs between states, with their states (the carriers' own sort centres). */
const RELAYS: readonly { city: string; state: string }[] = [
  { city: 'Nagpur', state: 'Maharashtra' }, { city: 'Raipur', state: 'Chhattisgarh' }, { city: 'Jhansi', state: 'Uttar Pradesh' },
  { city: 'Dhanbad', state: 'Jharkhand' }, { city: 'Ludhiana', state: 'Punjab' }, { city: 'Madurai', state: 'Tamil Nadu' },
];

/** Scan texts per carrier, as the mapping rules of config/mappings read them. */
const TEXTS = {
  delhivery: {
    booked: ['Manifested', 'UD', null], pickup: ['Picked Up', 'PU', null], hub: ['In Transit', 'UD', 'Bag Received at Facility'],
    held: ['In Transit', 'UD', 'Shipment held due to weather'], ofd: ['Out for Delivery', 'UD', null],
    failed: ['Undelivered', 'UD', 'Consignee Unavailable'], delivered: ['Delivered', 'DL', null],
    rto: ['Return to Origin', 'RT', null], rtoDone: ['RTO Delivered', 'RT', null],
  },
  ekart: {
    booked: ['Shipment Created', null, null], pickup: ['Pickup From Seller', null, null], hub: ['Received at Hub', null, null],
    held: ['On Hold', null, 'Delay due to weather'], ofd: ['Out For Delivery', null, null],
    failed: ['Undelivered', null, 'Customer not available'], delivered: ['Delivered', null, null],
    rto: ['RTO Initiated', null, null], rtoDone: ['RTO Completed', null, null],
  },
} as const;
type Carrier = keyof typeof TEXTS;
type Kind = keyof (typeof TEXTS)['delhivery'];

export interface OtherNetworkOptions {
  shipments: number;
  days: number;
  seed: number;
  calendar: DeliveryCalendar;
  /** First booking day (epoch ms, default 2026-03-01 00:00 IST). */
  startMs?: number;
  /**
   * Told of each shipment before its polls, for the bench's floor only: its lane's typical haul (which
   * no poll shows) and its scans, filled in as they are drawn (complete once its first poll is yielded).
   */
  onShipment?: (shipment: OtherShipment) => void;
}

/** A drawn shipment as the generator knows it. */
export interface OtherShipment {
  awb: string; carrier: string; typicalHours: number; origin: Place; destination: Place; scans: readonly Scan[];
}

/**
 * A generator's random numbers: mulberry32 of lib/random, the PRNG the sandbox draws from too. Only the
 * function is shared, not a sequence or a parameter: this network's seeds, lanes and laws are its own.
 */
const rng = seededRandom;

/** The polls of a generated history, shipment after shipment (each shipment's in time order). */
export function* otherNetworkPolls(options: OtherNetworkOptions): Generator<CarrierPoll> {
  const r = rng(options.seed);
  const start = options.startMs ?? Date.parse('2026-03-01T00:00:00+05:30');
  const end = start + options.days * DAY_MS;
  const cal = options.calendar;
  // Lanes: a typical line-haul per place pair and carrier, unrelated to any distance table.
  const base = new Map<string, number>();
  const baseOf = (carrier: string, o: number, d: number) => {
    const key = `${carrier}:${o}:${d}`;
    let h = base.get(key);
    if (h === undefined) base.set(key, (h = o === d ? 10 + 12 * r() : 22 + 90 * r()));
    return h;
  };
  // Unannounced closures: a few stretches of 2-3 days per destination with no deliveries.
  const closed = new Set<string>();
  for (const place of PLACES) for (const day of closedDaysOf(r, dayNumberOf(start), options.days)) closed.add(`${place.pincode}:${day}`);
  const working = (carrier: string, place: Place, day: number) => cal.isWorkingDay(dayText(day), { carrier, state: place.state });
  const deliverable = (carrier: string, place: Place, day: number) => working(carrier, place, day) && !closed.has(`${place.pincode}:${day}`);

  for (let n = 0; n < options.shipments; n++) {
    const carrier: Carrier = r() < 0.6 ? 'delhivery' : 'ekart';
    const express = carrier === 'delhivery' && r() < 0.3;
    const oi = Math.floor(r() * PLACES.length);
    const di = r() < 0.15 ? oi : Math.floor(r() * PLACES.length);
    const origin = PLACES[oi]!;
    const destination = PLACES[di]!;
    const awb = carrier === 'delhivery' ? String(2_000_000_000_000 + n * 7 + Math.floor(r() * 7)) : `FMPP${String(4_000_000_000 + n)}`;
    const bookedMs = start + r() * (end - start);
    const scans: Scan[] = [{ ms: bookedMs, kind: 'booked', where: 'origin' }];
    const relay = RELAYS[(oi * 7 + di * 3) % RELAYS.length]!;
    const pickup = pickupOf(r, bookedMs, (day) => working(carrier, origin, day));
    const pickupMs = pickup.ms;
    scans.push({ ms: pickupMs, kind: 'pickup', where: 'origin' });
    const typical = baseOf(carrier, oi, di) * (express ? 0.55 : 1);
    options.onShipment?.({ awb, carrier, typicalHours: typical, origin, destination, scans });
    const arrivalMs = pickupMs + haulHoursOf(r, typical) * HOUR_MS;
    // Hub scans along the way, then the destination's hub at arrival.
    for (let t = pickupMs + (6 + 10 * r()) * HOUR_MS; t < arrivalMs; t += (10 + 14 * r()) * HOUR_MS) {
      const where = whereOnTheWay((t - pickupMs) / (arrivalMs - pickupMs), oi === di, destination.stateHub !== null);
      scans.push({ ms: t, kind: r() < 0.03 ? 'held' : 'hub', where });
    }
    scans.push({ ms: arrivalMs, kind: 'hub', where: 'hub' });
    // Silent loss: the scans stop somewhere on the way.
    const lost = r() < 0.006;
    let outcome: 'delivered' | 'rto' | 'lost' = lost ? 'lost' : 'delivered';
    if (!lost) {
      const lastMile = lastMileOf(r, arrivalMs, (day) => deliverable(carrier, destination, day));
      scans.push(...lastMile.scans);
      if (!lastMile.delivered) outcome = 'rto';
    } else {
      scans.splice(2 + Math.floor(r() * Math.max(1, scans.length - 2)));
    }
    // The carrier's promise: optimistic, the lane's typical time rounded down, on working days.
    let eddDay = pickup.day;
    for (let left = Math.max(1, Math.floor(typical / 24)); left > 0;) { eddDay++; if (working(carrier, destination, eddDay)) left--; }
    const eddMs = r() < 0.9 ? istHour(eddDay, 20) : null;
    const service = carrier === 'ekart' ? 'standard' : express ? 'express' : 'surface';
    const lastScan = scans[scans.length - 1]!.ms;
    const terminal = outcome !== 'lost';
    // Polls: from an hour after booking every 6-18 hours, until one after the end (or the history's end).
    for (let t = bookedMs + HOUR_MS; t < end; t += (6 + 12 * r()) * HOUR_MS) {
      const seen = scans.filter((s) => s.ms <= t);
      yield pollOf(carrier, awb, t, seen, { origin, destination, relay }, service, eddMs, r);
      if (terminal && t > lastScan) break;
      if (!terminal && t > lastScan + 10 * DAY_MS) break;
    }
    void outcome;
  }
}

function hex(r: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(r() * 16).toString(16);
  return s;
}

type Scan = LawScan<Kind>;
interface Route { origin: Place; destination: Place; relay: { city: string; state: string } }

/** A scan's location as each carrier writes it: delhivery `City_Area_H (State)`, ekart upper case with the hub's role. */
function locationOf(carrier: Carrier, where: Where, route: Route): string {
  const { origin, destination, relay } = route;
  const [city, state] = where === 'origin' ? [origin.city, origin.state] : where === 'relay' ? [relay.city, relay.state]
    : where === 'state' ? [destination.stateHub ?? destination.city, destination.state] : [destination.city, destination.state];
  if (carrier === 'delhivery') {
    const suffix = where === 'branch' ? 'Central_D' : where === 'relay' ? 'Gateway_H' : 'Hub_H';
    return `${city}_${suffix} (${state})`;
  }
  const role = where === 'branch' ? 'DELIVERY CENTRE' : where === 'relay' ? 'SORT CENTRE' : 'MOTHER HUB';
  return `${city.toUpperCase()} ${role}`;
}

function pollOf(
  carrier: Carrier, awb: string, polledMs: number, seen: readonly Scan[], route: Route, service: string, eddMs: number | null, r: () => number,
): CarrierPoll {
  const { origin, destination } = route;
  const scans: RawScan[] = seen.map((s) => {
    const [raw_status, raw_code, remarks] = TEXTS[carrier][s.kind];
    return { occurred_at: new Date(Math.floor(s.ms / 1000) * 1000).toISOString(), raw_status, raw_code, remarks, location: locationOf(carrier, s.where, route) };
  });
  return {
    schema: 'carrier_poll.v1',
    poll_id: `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-a${hex(r, 3)}-${hex(r, 12)}`,
    carrier,
    awb,
    polled_at: new Date(Math.floor(polledMs)).toISOString(),
    source: 'poller',
    outcome: 'ok',
    shipment: {
      origin: { city: origin.city, state: origin.state, pincode: origin.pincode },
      destination: { city: destination.city, state: destination.state, pincode: destination.pincode },
      service_type: service,
      weight_grams: 500,
      booked_at: null,
      estimated_delivery_at: eddMs === null ? null : new Date(eddMs).toISOString(),
    },
    scans,
    error: null,
  };
}
