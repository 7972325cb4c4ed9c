/**
 * How the analyzer learns a shipment: the tracking service's ordinary lookup (cache first, one
 * carrier poll shared with any concurrent lookup, the poll published as every poll is), so only what
 * the cache lacks reaches a carrier, and nothing is metered (the analyzer has its own allowance).
 * Carrier polls go through a per-carrier gate shared by every analysis of the process: polite to
 * each carrier however many analyses run.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { isFresh } from '../cache/index.ts';
import { probeCandidates } from '../detect/index.ts';
import type { Awb, KeyMode } from '../schemas/index.ts';
import type { LookupResult, TrackingService } from '../tracking/index.ts';
import { foundShipment, missingShipment } from './shipment.ts';
import type { AnalyzedShipment, ShipmentInput } from './types.ts';

/**
 * Carrier polls of one carrier the analyzer process runs at once, over all its analyses: the
 * batch's per-carrier cap (apps/api/lookup/batch/run.ts PER_CARRIER_CONCURRENCY), so an analysis asks a
 * carrier no harder than one customer's batch does.
 */
export const ANALYZER_PER_CARRIER = 10;

/**
 * A poll's error when the carrier was not asked at all (lib/carriers/poll.ts failureReason of
 * http.ts's CarrierUnavailableError): its breaker was open, or too many calls were waiting.
 */
const RESTING = /carrier unavailable \((circuit_open|overloaded)\)/;

export type AnalyzerLookup = (input: ShipmentInput, mode: KeyMode) => Promise<AnalyzedShipment>;

export function trackingLookup(
  tracking: Pick<TrackingService, 'lookup' | 'readCache'>, clock: () => number, perCarrier = ANALYZER_PER_CARRIER,
): AnalyzerLookup {
  const limits = new Map<string, LimitFunction>();
  const gate = (carrier: string, run: () => Promise<LookupResult>) => {
    let limit = limits.get(carrier);
    if (!limit) limits.set(carrier, (limit = pLimit(perCarrier)));
    return limit(run);
  };
  const one = async (carrier: string, awb: Awb, mode: KeyMode): Promise<LookupResult> => {
    const cached = await tracking.readCache(carrier, awb, mode);
    const read = Promise.resolve(cached);
    // A fresh cache entry polls nothing: it need not wait for the carrier's gate.
    return cached && isFresh(cached, clock()) ? tracking.lookup(carrier, awb, mode, read) : gate(carrier, () => tracking.lookup(carrier, awb, mode, read));
  };
  return async (input, mode) => {
    if (input.carrier !== null) {
      const result = await one(input.carrier, input.awb, mode);
      if (result.kind === 'found') return foundShipment(input, input.carrier, result.record, result.facts);
      if (result.kind === 'not_found') return missingShipment(input, input.carrier, 'not_found', null);
      const missing = missingShipment(input, input.carrier, 'error', `${input.carrier} could not be reached`);
      return RESTING.test(result.reason) ? { ...missing, resting: true } : missing;
    }
    const outcome = await probeCandidates(input.candidates, (slug) => one(slug, input.awb, mode));
    if (outcome.kind === 'found') return foundShipment(input, outcome.slug, outcome.answer.record, outcome.answer.facts);
    if (outcome.kind === 'not_found') return missingShipment(input, null, 'not_found', null);
    return missingShipment(input, null, 'error', `${outcome.unreachable.join(', ')} could not be reached`);
  };
}
