/**
 * Windowed lane statistics (contracts.md "Lanes"), computed from closures. The ClickHouse refresh
 * (lib/clickhouse/lanes-window.ts) computes the same figures in SQL with the same arithmetic, in the
 * same order, so both stores give bit-identical numbers on the same data.
 */
import type { LaneClosure } from './closure.ts';

import { DAY_S } from '../time/index.ts';
import type { KeyMode } from '../schemas/index.ts';
export const DEFAULT_WINDOW_DAYS = 90;
/** Figures are shown (API, lookup benchmark) only from this many delivered shipments. */
export const MIN_SAMPLE = 30;

export interface NdrShare {
  reason: string;
  share: number;
}

export interface WindowedLaneStats {
  lane: string;
  carrier: string;
  origin_prefix: string;
  destination_prefix: string;
  mode: KeyMode;
  window_days: number;
  /** Closed shipments of the lane in the window (delivered + rto + cancelled). */
  closed: number;
  /** Delivered shipments with a transit time: the p50/p90 sample. */
  sample_size: number;
  p50_transit_days: number | null;
  p90_transit_days: number | null;
  /** Delivered by the carrier's EDD, of delivered shipments that had one. */
  on_time_rate: number | null;
  /** Delivered with no failed attempt first, of delivered shipments. */
  first_attempt_rate: number | null;
  /** Returned to origin, of delivered + returned shipments (cancelled ones never travelled). */
  rto_rate: number | null;
  /** Failed delivery attempts of the lane's closed shipments. */
  failed_attempts: number;
  /** Reason code → share of failed attempts, reasons in code order. */
  ndr_reasons: NdrShare[];
}

/** First instant (epoch s) inside a window of `days` ending at `endS`: closed at or after it. */
export function windowStartS(endS: number, days: number): number {
  return endS - days * DAY_S;
}

/** The spec's median of a sorted, non-empty list: the middle value or the mean of the middle two. */
export function p50OfSorted(sorted: readonly number[]): number {
  return p50Of(sorted.length, (i) => sorted[i]!);
}

/** The same median of n sorted values read through `at` (the lane book's sorted blocks). */
export function p50Of(n: number, at: (i: number) => number): number {
  // Same expression as the SQL: (x[(n+1) div 2] + x[n div 2 + 1]) / 2 with 1-based indexes.
  return (at(((n + 1) >> 1) - 1) + at(n >> 1)) / 2;
}

/**
 * p90 of a sorted, non-empty list: linear interpolation between closest ranks (Hyndman & Fan
 * type 7, the default of R, NumPy and spreadsheets' PERCENTILE.INC), of which the spec's median is
 * the p = 0.5 case. Rank h = 0.9 (n − 1) (0-based) is kept exact in integers: lo = ⌊9(n−1)/10⌋,
 * fraction = (9(n−1) mod 10) / 10; p90 = x[lo] + fraction · (x[lo+1] − x[lo]).
 */
export function p90OfSorted(sorted: readonly number[]): number {
  return p90Of(sorted.length, (i) => sorted[i]!);
}

/** The same p90 of n sorted values read through `at`. */
export function p90Of(n: number, at: (i: number) => number): number {
  const h9 = 9 * (n - 1);
  const lo = Math.floor(h9 / 10);
  const hi = Math.min(lo + 1, n - 1);
  const low = at(lo);
  return low + ((h9 % 10) / 10) * (at(hi) - low);
}

function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/** Splits a lane key (`[test:]carrier:o3:d3`) into its parts. */
export function laneParts(lane: string): { carrier: string; origin_prefix: string; destination_prefix: string; mode: KeyMode } {
  const test = lane.startsWith('test:');
  const [carrier = '', origin_prefix = '', destination_prefix = ''] = (test ? lane.slice(5) : lane).split(':');
  return { carrier, origin_prefix, destination_prefix, mode: test ? 'test' : 'live' };
}

/**
 * The statistics of one lane over the closures given (already one per shipment) that closed at or
 * after the window's start.
 */
export function laneStatsOf(lane: string, closures: Iterable<LaneClosure>, windowEndS: number, windowDays: number): WindowedLaneStats {
  const startS = windowStartS(windowEndS, windowDays);
  let closed = 0, delivered = 0, returned = 0, eddKnown = 0, onTime = 0, firstAttempt = 0;
  const transit: number[] = [];
  const reasons = new Map<string, number>();
  let failed = 0;
  for (const c of closures) {
    if (c.closedAtS < startS) continue;
    closed++;
    if (c.outcome === 'delivered') {
      delivered++;
      if (c.transitDays !== null) transit.push(c.transitDays);
      if (c.onTime !== null) { eddKnown++; onTime += c.onTime; }
      if (c.firstAttempt === 1) firstAttempt++;
    } else if (c.outcome === 'rto') returned++;
    for (const r of c.ndrReasons) { reasons.set(r, (reasons.get(r) ?? 0) + 1); failed++; }
  }
  transit.sort((a, b) => a - b);
  const n = transit.length;
  return {
    lane,
    ...laneParts(lane),
    window_days: windowDays,
    closed,
    sample_size: n,
    p50_transit_days: n ? p50OfSorted(transit) : null,
    p90_transit_days: n ? p90OfSorted(transit) : null,
    on_time_rate: rate(onTime, eddKnown),
    first_attempt_rate: rate(firstAttempt, delivered),
    rto_rate: rate(returned, delivered + returned),
    failed_attempts: failed,
    ndr_reasons: [...reasons.keys()].sort().map((reason) => ({ reason, share: reasons.get(reason)! / failed })),
  };
}
