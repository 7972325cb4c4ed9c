/**
 * The sandbox numbers the scenarios leave free (sandbox.md: SS 27-49) travel the simulated
 * network (lib/network): lane `LL mod 10` of sandbox.md's table, the asked carrier's profile, and
 * a journey booked 0-7 days before the IST day the number was first polled (its anchor; the number
 * draws the age), shown as far as it has got by the poll. The same carrier, number and anchor give
 * the same journey, which only moves on as time passes, as a real parcel does.
 */
import { loadCalendar, type DeliveryCalendar } from '../calendar/index.ts';
import { loadNetworkConfig, type NetworkConfig } from '../network/config.ts';
import { simulateJourney, type JourneyStep } from '../network/journey.ts';
import { loadPlaces, type Place, type PlaceDirectory } from '../places/index.ts';
import type { NdrReason } from '../schemas/index.ts';
import { DAY_MS, HOUR_MS } from '../time/index.ts';
import { addDays, istDayOf, istDayStartMs } from '../time/ist-day.ts';
import { seededRandom } from '../random/seeded-random.ts';
import { fnv1aHalfFmix32 } from './hash32.ts';
import type { SandboxPlace, SandboxShipment, SandboxStep } from './types.ts';

/** The scenario numbers the network answers (sandbox.md); 50-99 stay like 02, kept for new scenarios. */
export const FIRST_NETWORK_SCENARIO = 27;
export const LAST_NETWORK_SCENARIO = 49;
/** How many IST days before the poll's a free number's journey may have been booked. */
const MAX_AGE_DAYS = 7;

export interface Network {
  config: NetworkConfig;
  calendar: DeliveryCalendar;
  places: PlaceDirectory;
}

let defaultNetwork: Network | null = null;

/** The repository's network (config/), read once when a free number is first asked. */
export function defaultNetworkModel(): Network {
  defaultNetwork ??= { config: loadNetworkConfig(), calendar: loadCalendar(), places: loadPlaces() };
  return defaultNetwork;
}

/** The raw scenario digits SS of a number with 4 or more digits, when the network answers it. */
export function isNetworkNumber(awb: string): boolean {
  const digits = awb.replace(/\D/g, '');
  if (digits.length < 4) return false;
  const ss = Number(digits.slice(-2));
  return ss >= FIRST_NETWORK_SCENARIO && ss <= LAST_NETWORK_SCENARIO;
}

const REMARKS: Partial<Record<NdrReason, string>> = {
  customer_unavailable: 'Consignee Unavailable', address_issue: 'Bad/Incomplete Address', refused: 'Customer Refused to accept/Order Cancelled',
  premises_closed: 'Office/Institute closed', cod_not_ready: 'Payment not ready with customer',
};

function sandboxStep(step: JourneyStep): SandboxStep {
  const remark = step.kind === 'attempt_failed' ? REMARKS[step.ndr ?? 'customer_unavailable'] ?? null
    : step.kind === 'hold' ? 'Held at hub due to heavy rain'
      : step.kind === 'lost' ? 'Shipment declared lost in transit' : null;
  return { kind: step.kind, at: step.at, location: step.location, remark, ndr: step.ndr };
}

function sandboxPlace(place: Place): SandboxPlace {
  return { city: place.district, state: place.state, pincode: place.pincode };
}

/** The shipment a free number first polled at `anchor` shows at `now` (both whole minutes), on the lane `lanePincodes`. */
export function networkShipment(
  carrier: string, awb: string, scenario: number, lane: number, lanePincodes: { origin: string; destination: string },
  { anchor, now }: { anchor: number; now: number }, network: Network = defaultNetworkModel(),
): SandboxShipment {
  const origin = network.places.placeOf(lanePincodes.origin)!;
  const destination = network.places.placeOf(lanePincodes.destination)!;
  const random = seededRandom(fnv1aHalfFmix32(`network:${carrier}:${awb}`));
  const age = Math.floor(random() * (MAX_AGE_DAYS + 1));
  let bookedAt = istDayStartMs(addDays(istDayOf(anchor), -age)) + (9 + random() * 9) * HOUR_MS;
  if (bookedAt > anchor) bookedAt -= DAY_MS;
  const known = network.config.carriers[carrier] ? carrier : 'delhivery';
  const zone = network.places.zoneOf(origin, destination);
  const journey = simulateJourney({ carrier: known, origin, destination, zone, bookedAt, random }, network.config, network.calendar);
  return {
    carrier, awb, scenario, lane,
    origin: sandboxPlace(origin), destination: sandboxPlace(destination),
    bookedAt: journey.bookedAt, edd: journey.edd,
    weightGrams: 250 + (fnv1aHalfFmix32(`weight:${awb}`) % 40) * 125,
    serviceType: journey.serviceType,
    steps: journey.steps.filter((s) => s.at <= now).map(sandboxStep),
    shuffled: false,
  };
}
