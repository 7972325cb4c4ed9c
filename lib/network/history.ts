/**
 * Pure: the journeys of a generated history (`sandbox history`, the embedded default's first
 * start): which carrier carries what from where to where, and when it was booked. A share runs on
 * sandbox.md's ten lanes, spread evenly over the carriers serving each (so each gets a sample
 * there); the rest follows the carriers' shares from a few fulfilment centres and many sellers
 * (drawn from the pincode directory, weighted toward metros and commerce districts, a few selling
 * much and most a little) to pincodes all over India, more often in the seller's own state.
 */
import type { DeliveryCalendar } from '../calendar/calendar.ts';
import { districtKey, type Place, type Zone } from '../places/places.ts';
import { DAY_MS } from '../time/index.ts';
import type { NetworkConfig } from './config.ts';
import { simulateJourney, type Journey } from './journey.ts';

export interface HistoryJourney extends Journey {
  awb: string;
  /** sandbox.md's lane (0-9) for journeys on the ten lanes, else null. */
  sandboxLane: number | null;
  /** The journey's own random sequence, continued (poll times, weights). */
  random: () => number;
}

export interface PlaceLookup {
  placeOf(pincode: string): Place | null;
  all(): readonly Place[];
  zoneOf(origin: Place, destination: Place): Zone;
}

export interface HistoryPlan {
  shipments: number;
  days: number;
  seed: number;
  /** The history ends here (epoch ms): bookings fall in the `days` before it. */
  endMs: number;
  /** sandbox.md's ten lanes, as origin → destination pincodes, in lane order. */
  sandboxLanes: readonly { origin: string; destination: string }[];
  /** A seeded random sequence (lib/random/seeded-random.ts): one per journey, so any journey can be redrawn alone. */
  seededRandom: (seed: number) => () => number;
}

/** A carrier serves a place when it has no region or the place's state is in it. */
export function serves(config: NetworkConfig, carrier: string, place: Place): boolean {
  const states = config.carriers[carrier]!.states;
  return !states || states.includes(place.stateCode);
}

/** Consignment numbers in each carrier's shape; their last four digits are LL and SS (sandbox.md). */
const AWB_SHAPES: Readonly<Record<string, (serial: number, tail: string) => string>> = {
  delhivery: (n, t) => `9${pad(n, 8)}${t}`,
  bluedart: (n, t) => `5${pad(n, 6)}${t}`,
  dtdc: (n, t) => `H${pad(n, 6)}${t}`,
  shiprocket: (n, t) => `7${pad(n, 7)}${t}`,
  shreemaruti: (n, t) => `4${pad(n, 8)}${t}`,
  indiapost: (n, t) => `RK${pad(n, 5)}${t}IN`,
  speedpost: (n, t) => `EE${pad(n, 5)}${t}IN`,
  xpressbees: (n, t) => `1${pad(n, 9)}${t}`,
  shadowfax: (n, t) => `SF${pad(n, 7)}${t}X`,
  ekart: (n, t) => `FMPH${pad(n, 6)}${t}`,
  professionalcouriers: (n, t) => `PHC${pad(n, 6)}${t}`,
};

function pad(n: number, width: number): string {
  return String(n % 10 ** width).padStart(width, '0');
}

/** The lowest free scenario number (sandbox.md): a history number looked up shows a network journey. */
export const FIRST_FREE_SCENARIO = 27;
export const LAST_FREE_SCENARIO = 49;

export function historyAwb(carrier: string, serial: number, lane: number, random: () => number): string {
  const shape = AWB_SHAPES[carrier];
  if (!shape) throw new Error(`no consignment number shape for carrier "${carrier}"`);
  const ss = FIRST_FREE_SCENARIO + Math.floor(random() * (LAST_FREE_SCENARIO - FIRST_FREE_SCENARIO + 1));
  return shape(serial, `${pad(lane, 2)}${pad(ss, 2)}`);
}

function pickWeighted<T>(items: readonly T[], weight: (t: T) => number, random: () => number): T {
  const total = items.reduce((s, t) => s + weight(t), 0);
  let x = random() * total;
  for (const item of items) {
    x -= weight(item);
    if (x < 0) return item;
  }
  return items.at(-1)!;
}

function pickOne<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)]!;
}

/** Where a carrier's journeys start and end: everywhere, or its own states for a regional carrier. */
interface Region {
  fulfilmentCentres: readonly Place[];
  /** Seller pincodes, best-selling first, with their cumulative booking weights. */
  sellers: readonly Place[];
  sellerWeights: readonly number[];
  all: readonly Place[];
  metros: readonly Place[];
  byState: ReadonlyMap<string, readonly Place[]>;
}

/** Index of the first cumulative weight above `x` (binary search). */
function pickCumulative(cumulative: readonly number[], random: () => number): number {
  const x = random() * cumulative.at(-1)!;
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (cumulative[mid]! > x) high = mid;
    else low = mid + 1;
  }
  return low;
}

function cumulate(weights: readonly number[]): number[] {
  let sum = 0;
  return weights.map((w) => (sum += w));
}

/**
 * The history's sellers: `sellers.count` pincodes drawn (with replacement: a big city holds several
 * sellers at one pincode) from the directory, a metro or commerce-district pincode weighing more,
 * in rank order; seller i books ∝ 1 / (i + 1)^zipf. Drawn from the history's seed alone.
 */
function drawSellers(config: NetworkConfig, all: readonly Place[], random: () => number): Place[] {
  const { sellers } = config.history;
  const commerce = new Set(sellers.commerce_districts.map((d) => districtKey(d.state, d.district)));
  const weightOf = (p: Place) =>
    (p.metro ? sellers.weights.metro : commerce.has(districtKey(p.stateCode, p.district)) ? sellers.weights.commerce : sellers.weights.other);
  const cumulative = cumulate(all.map(weightOf));
  return Array.from({ length: sellers.count }, () => all[pickCumulative(cumulative, random)]!);
}

function regionOf(
  config: NetworkConfig, inside: (p: Place) => boolean, fulfilmentCentres: readonly Place[], sellers: readonly Place[], all: readonly Place[],
): Region {
  const regionAll = all.filter(inside);
  const metros = regionAll.filter((p) => p.metro);
  let regionSellers = sellers.filter(inside);
  if (regionSellers.length === 0) regionSellers = metros.length ? metros : regionAll;
  const byState = new Map<string, Place[]>();
  for (const p of regionAll) byState.set(p.stateCode, [...byState.get(p.stateCode) ?? [], p]);
  const centres = fulfilmentCentres.filter(inside);
  return {
    fulfilmentCentres: centres.length ? centres : regionSellers.slice(0, 1),
    sellers: regionSellers,
    sellerWeights: cumulate(regionSellers.map((_, rank) => 1 / (rank + 1) ** config.history.sellers.zipf)),
    all: regionAll,
    metros,
    byState,
  };
}

/** The journeys of a history, one at a time (a million need not sit in memory). */
export function* planHistory(plan: HistoryPlan, config: NetworkConfig, calendar: DeliveryCalendar, places: PlaceLookup): Generator<HistoryJourney> {
  const carriers = Object.keys(config.carriers);
  const must = (pincode: string) => {
    const place = places.placeOf(pincode);
    if (!place) throw new Error(`pincode ${pincode} is not in the pincode directory`);
    return place;
  };
  const lanes = plan.sandboxLanes.map((lane, index) => {
    const origin = must(lane.origin);
    const destination = must(lane.destination);
    return { index, origin, destination, carriers: carriers.filter((c) => serves(config, c, origin) && serves(config, c, destination)) };
  });
  const { history } = config;
  const all = places.all();
  const fulfilmentCentres = history.fulfilment_centres.pincodes.map(must);
  const sellers = drawSellers(config, all, plan.seededRandom((plan.seed * 0x27d4eb2d + 0x165667b1) >>> 0));
  // All-India carriers share one region; regional carriers get their own states' (computed once each).
  const regions = new Map<string, Region>();
  const national = regionOf(config, () => true, fulfilmentCentres, sellers, all);
  const regionFor = (carrier: string) => {
    if (!config.carriers[carrier]!.states) return national;
    let region = regions.get(carrier);
    if (!region) {
      region = regionOf(config, (p) => serves(config, carrier, p), fulfilmentCentres, sellers, all);
      regions.set(carrier, region);
    }
    return region;
  };
  const serials = new Map<string, number>();
  const startMs = plan.endMs - plan.days * DAY_MS;
  for (let i = 0; i < plan.shipments; i++) {
    const random = plan.seededRandom((plan.seed * 0x9e3779b1 + i * 0x85ebca6b) >>> 0);
    let carrier: string;
    let origin: Place;
    let destination: Place;
    let sandboxLane: number | null = null;
    if (random() < history.sandbox_lane_share) {
      const lane = pickOne(lanes, random);
      carrier = pickOne(lane.carriers, random);
      origin = lane.origin;
      destination = lane.destination;
      sandboxLane = lane.index;
    } else {
      carrier = pickWeighted(carriers, (c) => config.carriers[c]!.share, random);
      const region = regionFor(carrier);
      origin = random() < history.fulfilment_centres.share
        ? pickOne(region.fulfilmentCentres, random)
        : region.sellers[pickCumulative(region.sellerWeights, random)]!;
      const draw = random();
      const toMetro = history.local_share + (1 - history.local_share) * history.metro_destination_share;
      if (draw < history.local_share) destination = pickOne(region.byState.get(origin.stateCode) ?? region.all, random);
      else if (draw < toMetro && region.metros.length) destination = pickOne(region.metros, random);
      else destination = pickOne(region.all, random);
    }
    const bookedAt = startMs + random() * (plan.endMs - startMs);
    const zone = places.zoneOf(origin, destination);
    const journey = simulateJourney({ carrier, origin, destination, zone, bookedAt, random }, config, calendar);
    const serial = (serials.get(carrier) ?? plan.seed * 7919) + 1;
    serials.set(carrier, serial);
    const lane = sandboxLane ?? Math.floor(random() * 10) + 10 * (1 + Math.floor(random() * 9));
    yield { ...journey, awb: historyAwb(carrier, serial, lane, random), sandboxLane, random };
  }
}
