/**
 * The lane comparison answer of `GET /v1/lanes/{origin}/{destination}` (contracts.md "Lanes"),
 * built from the windowed statistics of each carrier's lane. Pure.
 */
import { MIN_SAMPLE, type NdrShare, type WindowedLaneStats } from './window.ts';

export interface CarrierLaneFigures {
  carrier: string;
  sample_size: number;
  p50_transit_days: number | null;
  p90_transit_days: number | null;
  on_time_rate: number | null;
  first_attempt_rate: number | null;
  rto_rate: number | null;
  ndr_reasons: Record<string, number> | null;
}

export interface LaneComparison {
  origin_prefix: string;
  destination_prefix: string;
  window_days: number;
  carriers: CarrierLaneFigures[];
  fastest: string | null;
  most_reliable: string | null;
}

const PINCODE = /^\d{6}$/;

/** True for an Indian pincode as the API accepts it: exactly six digits. */
export function isPincode(value: string): boolean {
  return PINCODE.test(value);
}

function figuresOf(s: WindowedLaneStats): CarrierLaneFigures {
  // Under MIN_SAMPLE deliveries the figures say more about chance than the carrier: null.
  const shown = s.sample_size >= MIN_SAMPLE;
  return {
    carrier: s.carrier,
    sample_size: s.sample_size,
    p50_transit_days: shown ? s.p50_transit_days : null,
    p90_transit_days: shown ? s.p90_transit_days : null,
    on_time_rate: shown ? s.on_time_rate : null,
    first_attempt_rate: shown ? s.first_attempt_rate : null,
    rto_rate: shown ? s.rto_rate : null,
    ndr_reasons: shown ? Object.fromEntries(s.ndr_reasons.map((r: NdrShare) => [r.reason, r.share])) : null,
  };
}

/**
 * The carrier with the smallest `key` (nulls never compete); ties go to the lower p90, then to the
 * slug in alphabetical order. null when no carrier qualifies.
 */
function best(carriers: readonly CarrierLaneFigures[], key: (c: CarrierLaneFigures) => number | null): string | null {
  const ranked = carriers
    .filter((c) => key(c) !== null)
    .sort((a, b) => key(a)! - key(b)! || (a.p90_transit_days ?? Infinity) - (b.p90_transit_days ?? Infinity) || (a.carrier < b.carrier ? -1 : 1));
  return ranked[0]?.carrier ?? null;
}

/**
 * `fastest`: the lowest p50 transit; `most_reliable`: the highest on-time rate (delivered by the
 * carrier's EDD). Only carriers with figures (≥ 30 deliveries) compete; ties go to the lower p90,
 * then to the slug in alphabetical order. Carriers are listed by slug.
 */
export function compareLanes(originPrefix: string, destinationPrefix: string, windowDays: number, stats: readonly WindowedLaneStats[]): LaneComparison {
  const carriers = stats.map(figuresOf).sort((a, b) => (a.carrier < b.carrier ? -1 : a.carrier > b.carrier ? 1 : 0));
  return {
    origin_prefix: originPrefix,
    destination_prefix: destinationPrefix,
    window_days: windowDays,
    carriers,
    fastest: best(carriers, (c) => c.p50_transit_days),
    most_reliable: best(carriers, (c) => (c.on_time_rate === null ? null : -c.on_time_rate)),
  };
}
