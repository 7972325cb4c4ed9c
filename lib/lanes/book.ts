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

  add(sample: LaneSample): void {
    let shipments = this.lanes.get(sample.lane);
    if (!shipments) this.lanes.set(sample.lane, (shipments = new Map()));
    shipments.set(sample.shipmentKey, sample.transitDays);
  }

  async get(lane: string): Promise<LaneStats | null> {
    const shipments = this.lanes.get(lane);
    if (!shipments || shipments.size === 0) return null;
    return { median_transit_days: median([...shipments.values()]), sample_size: shipments.size };
  }

  samples(): LaneSample[] {
    return [...this.lanes].flatMap(([lane, shipments]) => [...shipments].map(([shipmentKey, transitDays]) => ({ lane, shipmentKey, transitDays })));
  }
}
