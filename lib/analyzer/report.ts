/**
 * The analyzer's report (contracts.md "Shipment analyzer"): a pure function of the analysed
 * shipments and the network's lane statistics. One pass over the shipments feeds every grouping;
 * transit times are the lane statistics' (lib/lanes/window.ts: delivered only, p50 and p90 by the
 * same functions), so a customer's figure and the network's figure on a lane mean the same thing.
 */
import { MIN_SAMPLE, p50OfSorted, p90OfSorted } from '../lanes/index.ts';
import { NDR_REASONS, type NdrReason, type Stage } from '../schemas/index.ts';
import { recommend } from './recommend.ts';
import {
  OUTCOMES, type AnalyzedShipment, type AttentionItem, type Group, type LaneNetwork, type NetworkLaneFigures,
  type Outcome, type PaymentMode, type Report,
} from './types.ts';

/** contracts.md: the outcome of a found shipment, from its current stage. */
export const OUTCOME_OF_STAGE: Readonly<Record<Stage, Outcome>> = {
  delivered: 'delivered',
  rto_in_transit: 'rto',
  rto_delivered: 'rto',
  cancelled: 'cancelled',
  exception: 'exception',
  awaiting_pickup: 'pending',
  in_transit: 'in_transit',
  out_for_delivery: 'in_transit',
  delivery_attempted: 'in_transit',
};

const REASON_INDEX = new Map<string, number>(NDR_REASONS.map((r, i) => [r, i]));

/** Rates are fractions with 4 decimals, null when their base is 0. */
export function rate4(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}

const round4 = (x: number | null): number | null => (x === null ? null : Math.round(x * 10_000) / 10_000);

/** On time vs the carrier EDD at the lane statistics' precision (whole seconds, lib/lanes/closure.ts). */
export function deliveredByEdd(deliveredMs: number, eddMs: number): boolean {
  return Math.floor(deliveredMs / 1000) <= Math.floor(eddMs / 1000);
}

/**
 * Counters of one group, filled in the single pass. Plain number arrays, not typed arrays: a report
 * has thousands of groups (one per lane) and each typed array's backing store cost the collector
 * more than the whole pass.
 */
class Acc {
  shipments = 0;
  readonly outcomes: number[] = [0, 0, 0, 0, 0, 0];
  pickedUp = 0;
  withNdr = 0;
  firstAttempt = 0;
  readonly reasons: number[] = [0, 0, 0, 0, 0, 0];
  failed = 0;
  readonly transit: number[] = [];
  eddKnown = 0;
  eddOnTime = 0;
  promiseKnown = 0;
  promiseOnTime = 0;
  stuck = 0;

  add(s: AnalyzedShipment, outcome: number): void {
    this.shipments++;
    this.outcomes[outcome]!++;
    if (outcome !== PENDING && outcome !== CANCELLED) this.pickedUp++;
    const failed = s.ndr.length;
    if (failed > 0) {
      this.withNdr++;
      this.failed += failed;
      for (let i = 0; i < failed; i++) this.reasons[REASON_INDEX.get(s.ndr[i]!)!]!++;
    }
    if (outcome === DELIVERED) {
      if (failed === 0) this.firstAttempt++;
      if (s.transit_days !== null) this.transit.push(s.transit_days);
      if (s.delivered_ms !== null) {
        if (s.edd_ms !== null) { this.eddKnown++; if (deliveredByEdd(s.delivered_ms, s.edd_ms)) this.eddOnTime++; }
        if (s.promised_by_ms !== null) { this.promiseKnown++; if (s.delivered_ms <= s.promised_by_ms) this.promiseOnTime++; }
      }
    }
    if (s.is_stuck) this.stuck++;
  }

  group(): Group {
    const o = this.outcomes;
    const reasons: Record<string, number> = {};
    if (this.failed > 0) {
      NDR_REASONS.forEach((r, i) => { if (this.reasons[i]! > 0) reasons[r] = rate4(this.reasons[i]!, this.failed)!; });
    }
    const sorted = this.transit.sort((a, b) => a - b);
    const delivered = o[DELIVERED]!;
    return {
      shipments: this.shipments,
      delivered,
      rto: o[RTO]!,
      cancelled: o[CANCELLED]!,
      exception: o[EXCEPTION]!,
      in_transit: o[IN_TRANSIT]!,
      pending: o[PENDING]!,
      delivered_rate: rate4(delivered, this.pickedUp),
      rto_rate: rate4(o[RTO]!, this.pickedUp),
      ndr_rate: rate4(this.withNdr, this.pickedUp),
      first_attempt_rate: rate4(this.firstAttempt, delivered),
      ndr_reasons: reasons,
      p50_transit_days: sorted.length ? round4(p50OfSorted(sorted)) : null,
      p90_transit_days: sorted.length ? round4(p90OfSorted(sorted)) : null,
      on_time_rate_vs_carrier_edd: rate4(this.eddOnTime, this.eddKnown),
      on_time_rate_vs_promise: rate4(this.promiseOnTime, this.promiseKnown),
      stuck: this.stuck,
    };
  }
}

const DELIVERED = OUTCOMES.indexOf('delivered');
const RTO = OUTCOMES.indexOf('rto');
const CANCELLED = OUTCOMES.indexOf('cancelled');
const EXCEPTION = OUTCOMES.indexOf('exception');
const IN_TRANSIT = OUTCOMES.indexOf('in_transit');
const PENDING = OUTCOMES.indexOf('pending');
const OUTCOME_INDEX: Readonly<Record<string, number>> = Object.fromEntries(
  Object.entries(OUTCOME_OF_STAGE).map(([stage, outcome]) => [stage, OUTCOMES.indexOf(outcome)]),
);

function accOf(map: Map<string, Acc>, key: string): Acc {
  let acc = map.get(key);
  if (!acc) map.set(key, (acc = new Acc()));
  return acc;
}

/** Larger groups first, then by name: what a reader scans for. */
function bySize<T extends { shipments: number }>(entries: [string, T][]): [string, T][] {
  return entries.sort((a, b) => b[1].shipments - a[1].shipments || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** The network figures a report shows: null under MIN_SAMPLE deliveries (as GET /v1/lanes). */
export function laneNetwork(stats: NetworkLaneFigures | undefined): LaneNetwork | null {
  if (!stats || stats.sample_size < MIN_SAMPLE) return null;
  return {
    sample_size: stats.sample_size,
    p50_transit_days: round4(stats.p50_transit_days),
    on_time_rate: round4(stats.on_time_rate),
    rto_rate: round4(stats.rto_rate),
    first_attempt_rate: round4(stats.first_attempt_rate),
  };
}

const ATTENTION_ORDER = { stuck: 0, failed_attempt: 1, exception: 2 } as const;

/** decisions.md: stuck wins, then failed_attempt; exception otherwise. Null: nothing to do. */
function attentionReason(s: AnalyzedShipment): AttentionItem['reason'] | null {
  if (s.is_stuck) return 'stuck';
  if (s.stage === 'delivery_attempted') return 'failed_attempt';
  if (s.stage === 'exception') return 'exception';
  return null;
}

export interface ReportInput {
  shipments: Iterable<AnalyzedShipment>;
  /** The network's lane statistics by `carrier:o3:d3`, every carrier of each lane the shipments use. */
  network: ReadonlyMap<string, NetworkLaneFigures>;
  windowDays: number;
  asOfMs: number;
}

/** The report of an analysis (contracts.md "Report"), as of `asOfMs`. */
export function buildReport(input: ReportInput): Report {
  const totals = { shipments: 0, found: 0, not_found: 0, errors: 0, by_outcome: OUTCOMES.map(() => 0) };
  const carriers = new Map<string, Acc>();
  const lanes = new Map<string, Acc>();
  const states = new Map<string, Acc>();
  const modes = new Map<PaymentMode | 'unknown', Acc>();
  const attention: AttentionItem[] = [];
  for (const s of input.shipments) {
    totals.shipments++;
    if (s.result !== 'found') {
      if (s.result === 'not_found') totals.not_found++;
      else totals.errors++;
      continue;
    }
    totals.found++;
    const outcome = OUTCOME_INDEX[s.stage!]!;
    totals.by_outcome[outcome]!++;
    const carrier = s.carrier!;
    accOf(carriers, carrier).add(s, outcome);
    if (s.lane !== null) accOf(lanes, s.lane).add(s, outcome);
    accOf(states, s.destination_state ?? 'unknown').add(s, outcome);
    const mode = s.payment_mode ?? 'unknown';
    let modeAcc = modes.get(mode);
    if (!modeAcc) modes.set(mode, (modeAcc = new Acc()));
    modeAcc.add(s, outcome);
    const reason = attentionReason(s);
    if (reason) {
      attention.push({
        awb: s.awb, carrier, reason, current_stage: s.stage!, hours_since_last_scan: s.hours_since_last_scan,
        ndr_reason: (s.ndr.length ? s.ndr[s.ndr.length - 1]! : null) as NdrReason | null,
      });
    }
  }

  const byLane = bySize([...lanes].map(([lane, acc]): [string, Group] => [lane, acc.group()])).map(([lane, group]) => {
    const [carrier = '', origin_prefix = '', destination_prefix = ''] = lane.split(':');
    return { ...group, carrier, lane, origin_prefix, destination_prefix, network: laneNetwork(input.network.get(lane)) };
  });
  attention.sort((a, b) => ATTENTION_ORDER[a.reason] - ATTENTION_ORDER[b.reason]
    || (b.hours_since_last_scan ?? -1) - (a.hours_since_last_scan ?? -1)
    || (a.awb < b.awb ? -1 : a.awb > b.awb ? 1 : 0));
  return {
    as_of: new Date(input.asOfMs).toISOString(),
    totals: {
      shipments: totals.shipments, found: totals.found, not_found: totals.not_found, errors: totals.errors,
      by_outcome: Object.fromEntries(OUTCOMES.map((o, i) => [o, totals.by_outcome[i]!])) as Record<Outcome, number>,
    },
    by_carrier: bySize([...carriers].map(([carrier, acc]): [string, Group] => [carrier, acc.group()])).map(([carrier, g]) => ({ ...g, carrier })),
    by_lane: byLane,
    by_destination_state: bySize([...states].map(([state, acc]): [string, Group] => [state, acc.group()])).map(([state, g]) => ({ ...g, state })),
    by_payment_mode: (['cod', 'prepaid', 'unknown'] as const).filter((m) => modes.has(m)).map((m) => ({ ...modes.get(m)!.group(), payment_mode: m })),
    attention,
    recommendations: recommend(byLane, input.network, input.windowDays),
  };
}
