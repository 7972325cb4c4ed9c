import type { BaseRecord, ShipmentFacts } from '../normalize/types.ts';
import type { AttentionReason, Benchmark, Insights, PredictionJson, Stage, TrackingRecord } from '../schemas/index.ts';
import { round1 } from '../normalize/time.ts';
import { DAY_MS, HOUR_MS } from '../time/index.ts';

/** The stuck threshold of the spec: more than 72 hours without a scan. */
export const STUCK_AFTER_HOURS = 72;
/** Lanes need this many delivered shipments before their benchmark is shown. */
export const BENCHMARK_MIN_SAMPLE = 30;

const TERMINAL: ReadonlySet<Stage> = new Set(['delivered', 'rto_delivered', 'cancelled']);

/** Lane statistics as the pipeline computes them; absent until the lane has data. */
export interface LaneStats {
  median_transit_days: number;
  sample_size: number;
}

const NO_BENCHMARK: Benchmark = { median_transit_days_for_route: null, sample_size: null, expected_delivery_by: null };

function benchmarkOf(facts: ShipmentFacts, lane: LaneStats | null): Benchmark {
  if (!lane || lane.sample_size < BENCHMARK_MIN_SAMPLE) return NO_BENCHMARK;
  const expected = facts.first_physical_scan_ms === null
    ? null
    : new Date(facts.first_physical_scan_ms + lane.median_transit_days * DAY_MS).toISOString();
  return {
    median_transit_days_for_route: round1(lane.median_transit_days),
    sample_size: lane.sample_size,
    expected_delivery_by: expected,
  };
}

function attentionOf(stuck: boolean, stage: Stage): AttentionReason | null {
  if (stuck) return 'stuck';
  if (stage === 'delivery_attempted') return 'failed_attempt';
  if (stage === 'exception') return 'exception';
  return null;
}

/**
 * Insights of a record as of `nowMs`. Pure; recomputed on every answer, cached or not, so
 * "hours since last scan" and the stuck flag are never as old as the cache entry.
 */
export function computeInsights(
  record: Pick<BaseRecord, 'estimated_delivery_at' | 'delivered_at'>, facts: ShipmentFacts, nowMs: number, lane: LaneStats | null,
  prediction: PredictionJson | null = null,
): Insights {
  const { stage } = facts;
  const terminal = TERMINAL.has(stage);
  const hoursSinceLastScan = terminal || facts.last_scan_ms === null
    ? null
    : round1(Math.max(0, nowMs - facts.last_scan_ms) / HOUR_MS);
  // Transit runs from the first physical scan to delivery (or the end of a return), else to now.
  const transitEnd = facts.terminal_at_ms ?? nowMs;
  const transitDays = facts.first_physical_scan_ms === null
    ? null
    : round1(Math.max(0, transitEnd - facts.first_physical_scan_ms) / DAY_MS);
  const stuck = !terminal && stage !== 'awaiting_pickup' && facts.last_scan_ms !== null
    && nowMs - facts.last_scan_ms > STUCK_AFTER_HOURS * HOUR_MS;

  let late: boolean | null = null;
  let delayDays: number | null = null;
  if (record.estimated_delivery_at !== null && stage !== 'cancelled') {
    const edd = Date.parse(record.estimated_delivery_at);
    const compared = record.delivered_at !== null ? Date.parse(record.delivered_at) : nowMs;
    delayDays = round1((compared - edd) / DAY_MS);
    late = compared > edd;
  }

  const attention = attentionOf(stuck, stage);
  return {
    transit_days_elapsed: transitDays,
    hours_since_last_scan: hoursSinceLastScan,
    is_stuck: stuck,
    is_late_vs_carrier_edd: late,
    delay_days_vs_carrier_edd: delayDays,
    hub_count: facts.hub_count,
    current_stage: stage,
    requires_attention: attention !== null,
    attention_reason: attention,
    benchmark: benchmarkOf(facts, lane),
    // Read from the delivery model's precomputed tables by the caller (lib/prediction), as of nowMs.
    prediction,
  };
}

export interface AnswerContext {
  nowMs: number;
  lane: LaneStats | null;
  cached: boolean;
  stale: boolean;
  /** The delivery model's answer as of nowMs (lib/prediction); absent: null. */
  prediction?: PredictionJson | null;
}

/** The full tracking record the API returns: the stored record plus fresh insights and cache flags. */
export function toTrackingRecord(record: BaseRecord, facts: ShipmentFacts, ctx: AnswerContext): TrackingRecord {
  return { ...record, cached: ctx.cached, stale: ctx.stale, insights: computeInsights(record, facts, ctx.nowMs, ctx.lane, ctx.prediction ?? null) };
}
