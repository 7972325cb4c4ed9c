/**
 * Pure: one parcel's journey through the simulated network (docs/engineers/network-model.md), from
 * the booking to delivery, return to origin or loss, drawn from `random` (seeded by the caller) and
 * the parameters of config/sandbox/network.yaml. Pickups and deliveries only on the carrier's
 * working days (lib/calendar); line-haul grows with road distance, with a heavy tail; returns are
 * mostly decided at the door (a buyer who refuses the parcel or cannot be reached), as Indian D2C
 * returns are; the carrier's promise is its zone table in working days.
 */
import type { DeliveryCalendar } from '../calendar/calendar.ts';
import { distanceKm, type Place, type Zone } from '../places/places.ts';
import { fnv1a32 } from '../random/fnv1a.ts';
import { seededRandom } from '../random/seeded-random.ts';
import type { NdrReason } from '../schemas/index.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../time/index.ts';
import { addDays, istDayOf, istDayStartMs, type IstDay } from '../time/ist-day.ts';
import type { NetworkConfig } from './config.ts';

/** The steps of a journey (a subset of the sandbox's StepKind, which renders them). */
export type StepKind = 'booked' | 'picked_up' | 'hub_in' | 'hub_out' | 'out_for_delivery' | 'attempt_failed' | 'delivered'
  | 'hold' | 'rto_initiated' | 'rto_in_transit' | 'rto_delivered' | 'lost';

export type ServiceType = 'surface' | 'express' | 'speed_post';
export type JourneyOutcome = 'delivered' | 'rto' | 'lost';
type FailReason = Exclude<NdrReason, 'other'>;

export interface JourneyStep {
  kind: StepKind;
  /** Epoch ms, whole minutes. */
  at: number;
  location: string;
  ndr: NdrReason | null;
  remark: string | null;
}

export interface Journey {
  carrier: string;
  serviceType: ServiceType;
  cod: boolean;
  origin: Place;
  destination: Place;
  /** The lane's courier zone (lib/places zoneOf): the promise's row. */
  zone: Zone;
  /** Great-circle km (the line-haul drives `road_factor` × this). */
  distanceKm: number;
  bookedAt: number;
  /** The carrier's promise: end of its EDD's IST day. */
  edd: number;
  pickedUpAt: number;
  /** Chronological. */
  steps: JourneyStep[];
  outcome: JourneyOutcome;
  deliveredAt: number | null;
  /** When the journey ends (delivery, return delivered, loss declared). */
  closedAt: number;
}

export interface JourneyInput {
  carrier: string;
  origin: Place;
  destination: Place;
  /** The lane's zone (lib/places: `places.zoneOf(origin, destination)`). */
  zone: Zone;
  bookedAt: number;
  random: () => number;
  /** Forces the payment (tests comparing COD with prepaid); default drawn by `attempts.cod_share`. */
  cod?: boolean;
}

const HOLD_REMARK = 'Held at hub: connection missed, shipment delayed';
const LOST_REMARK = 'Shipment declared lost in transit';
const whole = (ms: number) => Math.round(ms / MINUTE_MS) * MINUTE_MS;

function uniform(random: () => number, [low, high]: readonly [number, number]): number {
  return low + (high - low) * random();
}

/** Standard normal by Box–Muller (one of the pair; simplicity beats speed here). */
function normal(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

function weighted<K extends string>(random: () => number, weights: Partial<Record<K, number>>): K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  let x = random() * total;
  for (const [key, w] of entries) {
    x -= w;
    if (x < 0) return key;
  }
  return entries.at(-1)![0];
}

export function serviceTypeFor(carrier: string, config: NetworkConfig, random: () => number): ServiceType {
  const express = random() < config.carriers[carrier]!.express_share;
  if (carrier === 'speedpost') return 'speed_post';
  if (carrier === 'indiapost') return express ? 'speed_post' : 'surface';
  return express ? 'express' : 'surface';
}

const festiveSpans = new WeakMap<NetworkConfig, readonly [number, number][]>();

/** True when `ms` falls in a festive window (IST days, both ends included). */
export function isFestive(ms: number, config: NetworkConfig): boolean {
  // As epoch-ms spans, computed once per config: this runs several times per journey.
  let spans = festiveSpans.get(config);
  if (!spans) {
    spans = config.festive.windows.map((w) => [istDayStartMs(w.from), istDayStartMs(addDays(w.to, 1))] as [number, number]);
    festiveSpans.set(config, spans);
  }
  return spans.some(([from, to]) => ms >= from && ms < to);
}

/**
 * The EDD a carrier promises: the N-th working day (the destination's, for this carrier) after the
 * booking's IST day, N from its zone table (express bookings: the express table when it has one),
 * end of that day. Optimistic, as real ones are: it knows nothing of holds, remote pincodes'
 * extra days or the festive peak, so it is met less often than the carrier's `claimed_on_time`.
 */
export function promisedEdd(
  carrier: string, serviceType: ServiceType, zone: Zone, bookedAt: number, destination: Place, config: NetworkConfig, calendar: DeliveryCalendar,
): number {
  const { promise } = config.profiles[config.carriers[carrier]!.profile]!;
  const table = serviceType !== 'surface' && promise.express_working_days ? promise.express_working_days : promise.working_days;
  const days = Math.max(1, table[zone]);
  const day = calendar.addWorkingDays(addDays(istDayOf(bookedAt), 1), days - 1, { carrier, state: destination.stateCode });
  return istDayStartMs(day) + DAY_MS - MINUTE_MS;
}

const cityFactors = new Map<string, number>();

/** A district's own return propensity in [−1, 1): fixed per district (a hash), so cities differ. */
function cityDeviation(place: Place): number {
  const key = `${place.stateCode}:${place.district}`;
  let deviation = cityFactors.get(key);
  if (deviation === undefined) {
    deviation = 2 * seededRandom(fnv1a32(`returns:${key}`))() - 1;
    cityFactors.set(key, deviation);
  }
  return deviation;
}

/**
 * The chance the buyer will not take the parcel (refuses it at the door or cannot be reached): by
 * payment, × the destination district's factor, × remote, × the days the first attempt took.
 */
export function returnChance(cod: boolean, destination: Place, daysToFirstAttempt: number, config: NetworkConfig): number {
  const { returns } = config;
  const byDays = returns.by_days_to_first_attempt.find((row) => daysToFirstAttempt <= row.up_to) ?? returns.by_days_to_first_attempt.at(-1)!;
  const chance = (cod ? returns.cod : returns.prepaid) * (1 + returns.city_spread * cityDeviation(destination))
    * (destination.remote ? returns.remote_factor : 1) * byDays.factor;
  return Math.min(0.95, chance);
}

function nearestVia(a: Place, b: Place, config: NetworkConfig): string {
  const mid = { lat: (a.lat + b.lat) / 2, lng: (a.lng + b.lng) / 2 };
  let best = config.via_hubs[0]!;
  for (const hub of config.via_hubs) if (distanceKm(hub, mid) < distanceKm(best, mid)) best = hub;
  return best.name;
}

/** One journey. Deterministic: the same input (and `random` sequence) gives the same journey. */
export function simulateJourney(input: JourneyInput, config: NetworkConfig, calendar: DeliveryCalendar): Journey {
  const { carrier, origin, destination, zone, random } = input;
  const carrierConfig = config.carriers[carrier];
  if (!carrierConfig) throw new Error(`carrier "${carrier}" is not in config/sandbox/network.yaml`);
  const profile = config.profiles[carrierConfig.profile]!;
  const atOrigin = { carrier, state: origin.stateCode };
  const atDestination = { carrier, state: destination.stateCode };
  const km = distanceKm(origin, destination);
  const roadKm = km * config.road_factor;
  const serviceType = serviceTypeFor(carrier, config, random);
  const cod = input.cod ?? random() < config.attempts.cod_share;
  const bookedAt = whole(input.bookedAt);
  const steps: JourneyStep[] = [];
  const step = (kind: StepKind, at: number, location: string, ndr: NdrReason | null = null, remark: string | null = null) => {
    steps.push({ kind, at: whole(at), location, ndr, remark });
  };
  const slow = (ms: number) => (isFestive(ms, config) ? config.festive.factor : 1);
  const dayStart = (day: IstDay) => istDayStartMs(day);

  step('booked', bookedAt, origin.district);
  // Pickup: the booking's day when booked before the cut-off on a working day, else the next working day.
  const bookedDay = istDayOf(bookedAt);
  const bookedHour = (bookedAt - dayStart(bookedDay)) / HOUR_MS;
  const sameDay = bookedHour < profile.pickup_cutoff_hour - 1 && calendar.isWorkingDay(bookedDay, atOrigin);
  const pickupDay = sameDay ? bookedDay : calendar.nextWorkingDay(addDays(bookedDay, 1), atOrigin);
  const pickupFrom = sameDay ? bookedHour + 0.5 : 9;
  const pickedUpAt = dayStart(pickupDay) + uniform(random, [pickupFrom, Math.max(pickupFrom, profile.pickup_cutoff_hour)]) * HOUR_MS;
  step('picked_up', pickedUpAt, origin.district);

  const originHub = `${origin.district} Hub`;
  const destinationHub = `${destination.district} Hub`;
  const originHubAt = pickedUpAt + uniform(random, profile.first_mile_hours) * HOUR_MS * slow(pickedUpAt);
  step('hub_in', originHubAt, originHub);
  let t = originHubAt + uniform(random, profile.hub_dwell_hours) * HOUR_MS * slow(originHubAt);
  step('hub_out', t, originHub);

  const speed = serviceType === 'surface' ? 1 : config.express_factor;
  const linehaulHours = (profile.linehaul.base_hours + profile.linehaul.per_1000_km_hours * (roadKm / 1000))
    * Math.exp(profile.linehaul.sigma * normal(random)) * speed * slow(t);
  // The heavy tail: a hold at a hub (missed connection, weather, backlog), Pareto-distributed.
  const held = random() < config.hold.probability;
  const holdHours = held
    ? Math.min(config.hold.max_hours, config.hold.scale_hours * (Math.max(random(), 1e-9) ** (-1 / config.hold.alpha) - 1))
    : 0;
  if (km >= config.via_hub_min_km) {
    const via = nearestVia(origin, destination, config);
    const viaIn = t + linehaulHours * 0.5 * HOUR_MS;
    step('hub_in', viaIn, via);
    if (held) step('hold', viaIn + HOUR_MS, via, 'other', HOLD_REMARK);
    const viaOut = viaIn + (uniform(random, profile.hub_dwell_hours) + holdHours) * HOUR_MS;
    step('hub_out', viaOut, via);
    t = viaOut + linehaulHours * 0.5 * HOUR_MS;
  } else {
    if (held) step('hold', t + 30 * MINUTE_MS, originHub, 'other', HOLD_REMARK);
    t += (linehaulHours + holdHours) * HOUR_MS;
  }
  // A remote destination waits for its few weekly runs; longest in the special zone (North-East, J&K...).
  if (destination.remote) t += uniform(random, zone === 'special' ? config.remote.special_extra_days : config.remote.extra_days) * DAY_MS;
  step('hub_in', t, destinationHub);
  const edd = promisedEdd(carrier, serviceType, zone, bookedAt, destination, config, calendar);
  const base = { carrier, serviceType, cod, origin, destination, zone, distanceKm: km, bookedAt, edd, pickedUpAt: whole(pickedUpAt), steps };

  if (random() < config.loss_probability) {
    const lostAt = t + uniform(random, [2, 6]) * DAY_MS;
    step('lost', lostAt, destinationHub, null, LOST_REMARK);
    return { ...base, outcome: 'lost', deliveredAt: null, closedAt: whole(lostAt) };
  }

  // The last mile: out for delivery on the destination's working days.
  const ready = t + uniform(random, profile.hub_dwell_hours) * HOUR_MS * 0.5;
  const readyDay = istDayOf(ready);
  const readyHour = (ready - dayStart(readyDay)) / HOUR_MS;
  let ofdDay = calendar.nextWorkingDay(readyHour <= config.last_mile.same_day_cutoff_hour ? readyDay : addDays(readyDay, 1), atDestination);
  const { attempts } = config;
  const failure = (cod ? attempts.failure_cod : attempts.failure_prepaid) * (destination.remote ? config.remote.attempt_failure_factor : 1);
  const maxAttempts = attempts.max[0] + Math.floor(random() * (attempts.max[1] - attempts.max[0] + 1));
  // Decided at the first attempt: will the buyer take it? One who will not refuses it at the door
  // (the parcel returns at once) or cannot be reached at any attempt.
  const daysToFirstAttempt = Math.round((dayStart(ofdDay) - dayStart(bookedDay)) / DAY_MS);
  const refusing = random() < returnChance(cod, destination, daysToFirstAttempt, config);
  const refusesAtDoor = refusing && random() < config.returns.refused_share;
  let lastAttempt = ready;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const ofdAt = dayStart(ofdDay) + uniform(random, config.last_mile.ofd_hour) * HOUR_MS;
    const attemptAt = ofdAt + uniform(random, config.last_mile.attempt_after_ofd_hours) * HOUR_MS;
    step('out_for_delivery', ofdAt, destination.district);
    const pFail = failure * (isFestive(ofdAt, config) ? config.festive.attempt_failure_factor : 1);
    if (!refusing && random() >= pFail) {
      step('delivered', attemptAt, destination.district);
      return { ...base, outcome: 'delivered', deliveredAt: whole(attemptAt), closedAt: whole(attemptAt) };
    }
    const reason: FailReason = refusesAtDoor ? 'refused'
      : weighted<FailReason>(random, refusing ? config.returns.reasons_unreachable : cod ? attempts.reasons_cod : attempts.reasons_prepaid);
    step('attempt_failed', attemptAt, destination.district, reason);
    lastAttempt = attemptAt;
    if (refusesAtDoor) break;
    ofdDay = calendar.nextWorkingDay(addDays(ofdDay, 1), atDestination);
  }
  // Return to origin: the same road back, delivered to the seller on one of its working days.
  const rtoAt = lastAttempt + uniform(random, [2, 10]) * HOUR_MS;
  step('rto_initiated', rtoAt, destination.district);
  const backAt = rtoAt + uniform(random, profile.hub_dwell_hours) * HOUR_MS;
  step('rto_in_transit', backAt, destinationHub);
  const returnedDay = calendar.nextWorkingDay(istDayOf(backAt + linehaulHours * 1.2 * HOUR_MS + DAY_MS), atOrigin);
  const returnedAt = dayStart(returnedDay) + uniform(random, [11, 18]) * HOUR_MS;
  step('rto_delivered', returnedAt, origin.district);
  return { ...base, outcome: 'rto', deliveredAt: null, closedAt: whole(returnedAt) };
}
