/**
 * A generated history (sandbox.md "The network model and its history"): the network's journeys
 * as the raw-poll log (`carrier_poll.v1`) a poller would have written, several polls per journey,
 * each showing the scans made by then in the carrier's own words (./vocabulary.ts), so the
 * product's mapping rules read them like any poll. No HTTP: a million journeys stay cheap.
 */
import type { DeliveryCalendar } from '../calendar/calendar.ts';
import { planHistory, type HistoryJourney, type HistoryPlan, type PlaceLookup } from '../network/history.ts';
import type { NetworkConfig } from '../network/config.ts';
import type { CarrierPoll, Location, RawScan } from '../schemas/index.ts';
import { HOUR_MS } from '../time/index.ts';
import { LANES } from './scenario.ts';
import { seededRandom } from '../random/seeded-random.ts';
import { carrierTime, vocabularyOf, type CarrierVocabulary } from './vocabulary.ts';

export type { HistoryJourney };

/** sandbox.md's ten lanes as pincodes, for the history's plan. */
export const SANDBOX_LANE_PINCODES = LANES.map((lane) => ({ origin: lane.origin.pincode, destination: lane.destination.pincode }));

/** Every carrier's vocabulary, learned once (./vocabulary.ts). */
export async function loadVocabularies(carriers: readonly string[]): Promise<Map<string, CarrierVocabulary>> {
  return new Map(await Promise.all(carriers.map(async (c) => [c, await vocabularyOf(c)] as const)));
}

/** A UUID-shaped poll id from the journey's random sequence: the same seed gives the same log. */
function pollId(random: () => number): string {
  const hex = Array.from({ length: 4 }, () => Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function locationOf(place: { district: string; state: string; pincode: string }, fields: CarrierVocabulary['locationFields']): Location {
  return { city: fields.city ? place.district : null, state: fields.state ? place.state : null, pincode: fields.pincode ? place.pincode : null };
}

/**
 * The polls of one journey, oldest first: `min..max` of them between its booking and `endMs`, the
 * last one soon after it closed (a poller's next round) when it closed before `endMs`.
 */
export function pollsOfJourney(
  journey: HistoryJourney, vocabulary: CarrierVocabulary, endMs: number, pollsPerJourney: readonly [number, number],
): CarrierPoll[] {
  const { random } = journey;
  if (journey.bookedAt >= endMs) return [];
  const count = pollsPerJourney[0] + Math.floor(random() * (pollsPerJourney[1] - pollsPerJourney[0] + 1));
  const last = journey.closedAt < endMs ? Math.min(endMs, journey.closedAt + (1 + random() * 11) * HOUR_MS) : endMs;
  const first = Math.min(last, journey.bookedAt + HOUR_MS);
  const times = [last];
  for (let i = 1; i < count; i++) times.push(first + random() * (last - first));
  times.sort((a, b) => a - b);
  const header = vocabulary.header;
  const weight = 250 + Math.floor(random() * 40) * 125;
  const shipment = {
    origin: header.origin ? locationOf(journey.origin, vocabulary.locationFields) : null,
    destination: header.destination ? locationOf(journey.destination, vocabulary.locationFields) : null,
    service_type: header.service_type ? journey.serviceType : null,
    weight_grams: header.weight_grams ? weight : null,
    booked_at: header.booked_at ? carrierTime(journey.bookedAt, vocabulary.timeStyle) : null,
    estimated_delivery_at: header.estimated_delivery_at ? carrierTime(journey.edd, vocabulary.timeStyle) : null,
  };
  const scans: RawScan[] = journey.steps.map((step) => {
    const words = vocabulary.words(step.kind, step.ndr);
    return {
      occurred_at: carrierTime(step.at, vocabulary.timeStyle),
      raw_status: words.rawStatus(step.location),
      raw_code: words.rawCode,
      remarks: words.remarks ? words.remarks(step.location) : null,
      location: words.location ? words.location(step.location) : null,
    };
  });
  return times.map((t, i) => {
    const shown = scans.filter((_, s) => journey.steps[s]!.at <= t);
    return {
      schema: 'carrier_poll.v1' as const,
      poll_id: pollId(random),
      carrier: journey.carrier,
      awb: journey.awb,
      polled_at: new Date(Math.floor(t)).toISOString(),
      source: i === 0 ? 'lookup' as const : 'poller' as const,
      outcome: 'ok' as const,
      shipment,
      scans: shown,
      error: null,
    };
  });
}

export interface HistoryOptions extends Omit<HistoryPlan, 'sandboxLanes' | 'seededRandom'> {
  /** Polls per journey (default the config's `history.polls_per_journey`). */
  pollsPerJourney?: readonly [number, number];
  config: NetworkConfig;
  calendar: DeliveryCalendar;
  places: PlaceLookup;
}

/** The history's polls, journey by journey (each journey's oldest first). */
export async function* historyPolls(options: HistoryOptions): AsyncGenerator<{ journey: HistoryJourney; polls: CarrierPoll[] }> {
  const vocabularies = await loadVocabularies(Object.keys(options.config.carriers));
  const plan = { ...options, sandboxLanes: SANDBOX_LANE_PINCODES, seededRandom };
  for (const journey of planHistory(plan, options.config, options.calendar, options.places)) {
    yield {
      journey,
      polls: pollsOfJourney(journey, vocabularies.get(journey.carrier)!, options.endMs, options.pollsPerJourney ?? options.config.history.polls_per_journey),
    };
  }
}
