/** What an analysis keeps of one shipment, from its tracking record. Pure. */
import type { ShipmentFacts } from '../normalize/index.ts';
import type { NdrReason, TrackingRecord } from '../schemas/index.ts';
import { DAY_MS } from '../time/index.ts';
import type { AnalyzedShipment, ShipmentInput } from './types.ts';

type Known = Pick<AnalyzedShipment, 'awb' | 'order_id' | 'payment_mode' | 'promised_by_ms'>;

function known(input: ShipmentInput): Known {
  return { awb: input.awb, order_id: input.order_id, payment_mode: input.payment_mode, promised_by_ms: input.promised_by_ms };
}

const EMPTY = {
  status: null, stage: null, attempts: 0, ndr: [], transit_days: null, origin_pincode: null, destination_pincode: null,
  destination_state: null, lane: null, edd_ms: null, delivered_ms: null, is_stuck: false, hours_since_last_scan: null,
} as const;

export function foundShipment(input: ShipmentInput, carrier: string, record: TrackingRecord, facts: ShipmentFacts): AnalyzedShipment {
  const delivered = facts.stage === 'delivered' && facts.first_physical_scan_ms !== null && facts.terminal_at_ms !== null;
  const ndr: NdrReason[] = [];
  // Oldest first: the attempts list is in time order (insights) — sort to be sure.
  const failed = record.delivery_attempts.attempts.filter((a) => a.outcome === 'failed').sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  for (const a of failed) ndr.push(a.reason_code ?? 'other');
  return {
    ...known(input),
    carrier,
    result: 'found',
    status: record.status,
    stage: facts.stage,
    attempts: record.delivery_attempts.count,
    ndr,
    // The lane statistics' transit time (lib/lanes/book.ts closureOfShipment): not rounded.
    transit_days: delivered ? (facts.terminal_at_ms! - facts.first_physical_scan_ms!) / DAY_MS : null,
    origin_pincode: record.origin?.pincode ?? null,
    destination_pincode: record.destination?.pincode ?? null,
    destination_state: record.destination?.state ?? null,
    lane: facts.lane,
    edd_ms: record.estimated_delivery_at === null ? null : Date.parse(record.estimated_delivery_at),
    delivered_ms: record.delivered_at === null ? null : Date.parse(record.delivered_at),
    is_stuck: record.insights.is_stuck,
    hours_since_last_scan: record.insights.hours_since_last_scan,
    error: null,
  };
}

export function missingShipment(input: ShipmentInput, carrier: string | null, result: 'not_found' | 'error', error: string | null): AnalyzedShipment {
  return { ...known(input), ...EMPTY, ndr: [], carrier, result, error };
}
