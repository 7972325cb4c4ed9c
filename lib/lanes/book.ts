import type { NormalizedShipment } from '../normalize/index.ts';
import { DAY_MS } from '../normalize/time.ts';
import { median } from './median.ts';
import type { LaneStats, LaneStatsSource } from './types.ts';

/** A delivered shipment's contribution to its lane. */
export interface LaneSample {
  lane: string;
  /** carrier:AWB, so a shipment polled many times counts once. */
  shipmentKey: string;
  transitDays: number;
}

/** The lane sample of a delivered shipment with a lane and a first physical scan, else null. */
export function laneSampleOf(shipment: NormalizedShipment): LaneSample | null {
  const { record, facts } = shipment;
  if (!facts.lane || facts.stage !== 'delivered' || facts.first_physical_scan_ms === null || facts.terminal_at_ms === null) return null;
  return {
    lane: facts.lane,
    shipmentKey: `${record.carrier}:${record.awb}`,
    transitDays: (facts.terminal_at_ms - facts.first_physical_scan_ms) / DAY_MS,
  };
}

/**
 * In-process lane benchmarks for the embedded default: delivered shipments per lane and the
 * median of their transit days (decisions.md "Lane benchmark").
 */
export class LaneBook implements LaneStatsSource {
  private readonly lanes = new Map<string, Map<string, number>>();
  /** Stats per lane, computed on first read after a change: lookups read far more than polls add. */
  private readonly stats = new Map<string, LaneStats>();

  add(sample: LaneSample): void {
    let shipments = this.lanes.get(sample.lane);
    if (!shipments) this.lanes.set(sample.lane, (shipments = new Map()));
    shipments.set(sample.shipmentKey, sample.transitDays);
    this.stats.delete(sample.lane);
  }

  async get(lane: string): Promise<LaneStats | null> {
    const known = this.stats.get(lane);
    if (known) return known;
    const shipments = this.lanes.get(lane);
    if (!shipments || shipments.size === 0) return null;
    const computed = { median_transit_days: median([...shipments.values()]), sample_size: shipments.size };
    this.stats.set(lane, computed);
    return computed;
  }

  samples(): LaneSample[] {
    return [...this.lanes].flatMap(([lane, shipments]) => [...shipments].map(([shipmentKey, transitDays]) => ({ lane, shipmentKey, transitDays })));
  }
}
