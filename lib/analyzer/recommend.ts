/**
 * Carrier recommendations of the analyzer's report. The rule (docs/integrators/analyzer.md):
 *
 * On a lane (origin prefix → destination prefix) where the customer has at least
 * MIN_OWN_SHIPMENTS picked-up shipments with carrier X, suggest carrier Y when the network's figures
 * of both X and Y on that lane have at least 30 delivered samples (MIN_SAMPLE) and Y is
 *  - faster: p50 transit at least FASTER_BY_DAYS lower, with an RTO rate no higher; or
 *  - returns less: RTO rate at least FEWER_RTO_BY lower, with a p50 transit no higher.
 * Of several such Y: the lowest RTO rate, then the lowest p50, then the slug. At most one
 * suggestion per lane and carrier. Only network figures of 30 or more samples are ever cited.
 */
import { MIN_SAMPLE } from '../lanes/index.ts';
import type { Group, NetworkLaneFigures, Recommendation, RecommendationFigures } from './types.ts';

export const MIN_OWN_SHIPMENTS = 5;
export const FASTER_BY_DAYS = 0.5;
export const FEWER_RTO_BY = 0.05;

type LaneGroup = Group & { carrier: string; lane: string; origin_prefix: string; destination_prefix: string };

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

function cited(s: NetworkLaneFigures | undefined): RecommendationFigures | null {
  if (!s || s.sample_size < MIN_SAMPLE || s.p50_transit_days === null || s.rto_rate === null) return null;
  return { carrier: s.carrier, sample_size: s.sample_size, p50_transit_days: r4(s.p50_transit_days), rto_rate: r4(s.rto_rate) };
}

export function recommend(lanes: readonly LaneGroup[], network: ReadonlyMap<string, NetworkLaneFigures>, windowDays: number): Recommendation[] {
  // Every carrier's figures per lane pair, once.
  const byPair = new Map<string, NetworkLaneFigures[]>();
  for (const s of network.values()) {
    const pair = `${s.origin_prefix}:${s.destination_prefix}`;
    let list = byPair.get(pair);
    if (!list) byPair.set(pair, (list = []));
    list.push(s);
  }
  const out: Recommendation[] = [];
  for (const lane of lanes) {
    if (lane.shipments - lane.pending - lane.cancelled < MIN_OWN_SHIPMENTS) continue;
    const current = cited(network.get(lane.lane));
    if (!current) continue;
    let best: { figures: RecommendationFigures; faster: boolean; fewer: boolean } | null = null;
    for (const other of byPair.get(`${lane.origin_prefix}:${lane.destination_prefix}`) ?? []) {
      if (other.carrier === lane.carrier) continue;
      const y = cited(other);
      if (!y) continue;
      const faster = y.p50_transit_days <= current.p50_transit_days - FASTER_BY_DAYS && y.rto_rate <= current.rto_rate;
      const fewer = y.rto_rate <= current.rto_rate - FEWER_RTO_BY && y.p50_transit_days <= current.p50_transit_days;
      if (!faster && !fewer) continue;
      const better = !best
        || y.rto_rate < best.figures.rto_rate
        || (y.rto_rate === best.figures.rto_rate && (y.p50_transit_days < best.figures.p50_transit_days
          || (y.p50_transit_days === best.figures.p50_transit_days && y.carrier < best.figures.carrier)));
      if (better) best = { figures: y, faster, fewer };
    }
    if (!best) continue;
    const y = best.figures;
    const parts: string[] = [];
    if (best.faster) parts.push(`delivers faster on this lane (median ${y.p50_transit_days} days against ${current.p50_transit_days})`);
    if (best.fewer) parts.push(`returns fewer shipments (RTO ${(y.rto_rate * 100).toFixed(1)}% against ${(current.rto_rate * 100).toFixed(1)}%)`);
    out.push({
      lane: lane.lane,
      current_carrier: lane.carrier,
      suggested_carrier: y.carrier,
      reason: `Across the network over the last ${windowDays} days, ${y.carrier} ${parts.join(' and ')} than ${lane.carrier}.`,
      figures: { current, suggested: y, window_days: windowDays },
    });
  }
  return out;
}
