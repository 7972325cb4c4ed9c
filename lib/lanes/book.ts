import type { NormalizedShipment } from '../normalize/index.ts';
import { DAY_MS } from '../time/index.ts';
import { laneClosureOf, type LaneClosure } from './closure.ts';
import type { LaneStats, LaneStatsSource } from './types.ts';
import { DEFAULT_WINDOW_DAYS, laneStatsOf, type WindowedLaneStats } from './window.ts';
import type { KeyMode } from '../schemas/index.ts';

/** Windowed statistics of every carrier of one origin/destination prefix pair (the lanes API). */
export interface LaneWindowSource {
  /** One entry per carrier with a closure in the window, any order. */
  lanesBetween(originPrefix: string, destinationPrefix: string, mode: KeyMode): Promise<WindowedLaneStats[]>;
  readonly windowDays: number;
  /**
   * Sources that answer from a copy (ClickHouse's snapshot of lane_stats): when the copy was read
   * and when it is read next, so an empty answer right after closures can be explained. Absent:
   * the figures are computed at the request (the embedded book).
   */
  freshness?(): LaneFreshness;
}

export interface LaneFreshness {
  /** When the figures answered were read from the store (epoch ms), null before the first read. */
  readAtMs: number | null;
  /** When a request will next start a read (epoch ms). */
  nextReadAtMs: number;
}

/** The closure of a normalized shipment polled at `polledMs` for a key of `mode`, null unless closed on a lane. */
export function closureOfShipment(shipment: NormalizedShipment, mode: KeyMode, polledMs: number): LaneClosure | null {
  const { record, facts } = shipment;
  const delivered = facts.stage === 'delivered' && facts.first_physical_scan_ms !== null && facts.terminal_at_ms !== null;
  return laneClosureOf({
    carrier: record.carrier,
    awb: record.awb,
    mode,
    lane: facts.lane,
    stage: facts.stage,
    eddMs: record.estimated_delivery_at === null ? null : Date.parse(record.estimated_delivery_at),
    attempts: record.delivery_attempts.count,
    // The same expression as the shipments row's transit_days (lib/clickhouse/rows.ts).
    transitDays: delivered ? (facts.terminal_at_ms! - facts.first_physical_scan_ms!) / DAY_MS : null,
    events: record.events.map((e) => ({ event_id: e.event_id, occurredMs: Date.parse(e.timestamp), code: e.code, status: e.status, reason_code: e.reason_code })),
    version: polledMs,
  });
}

export interface LaneBookOptions {
  windowDays?: number;
  clock?: () => number;
  /** Computed stats of a lane are reused this long (a lane's window slides slowly). Default 60 s. */
  ttlMs?: number;
}

/**
 * In-process lane statistics for the embedded default: one closure per closed shipment, grouped by
 * lane; a lane's windowed figures (lib/lanes/window.ts, the same as ClickHouse's lane_stats) are
 * computed on read and reused until the lane changes or `ttlMs` passes. The lookup's benchmark
 * (decisions.md "Lane benchmark") is the window's p50 and sample size.
 */
export class LaneBook implements LaneStatsSource, LaneWindowSource {
  private readonly lanes = new Map<string, Map<string, LaneClosure>>();
  private readonly computed = new Map<string, { at: number; stats: WindowedLaneStats }>();
  readonly windowDays: number;
  private readonly clock: () => number;
  private readonly ttlMs: number;

  constructor(options: LaneBookOptions = {}) {
    this.windowDays = options.windowDays ?? DEFAULT_WINDOW_DAYS;
    this.clock = options.clock ?? Date.now;
    this.ttlMs = options.ttlMs ?? 60_000;
  }

  /** Records a closure; the newest poll's closure of a shipment replaces older ones (re-polls change nothing). */
  add(closure: LaneClosure): void {
    let shipments = this.lanes.get(closure.lane);
    if (!shipments) this.lanes.set(closure.lane, (shipments = new Map()));
    const key = `${closure.carrier}:${closure.awb}`;
    const known = shipments.get(key);
    if (known && known.version > closure.version) return;
    shipments.set(key, closure);
    this.computed.delete(closure.lane);
  }

  /** The lane's windowed statistics now, null when it has no closure at all. */
  statsOf(lane: string): WindowedLaneStats | null {
    const now = this.clock();
    const known = this.computed.get(lane);
    if (known && now - known.at < this.ttlMs) return known.stats;
    const shipments = this.lanes.get(lane);
    if (!shipments) return null;
    const stats = laneStatsOf(lane, shipments.values(), Math.floor(now / 1000), this.windowDays);
    this.computed.set(lane, { at: now, stats });
    return stats;
  }

  async get(lane: string): Promise<LaneStats | null> {
    const stats = this.statsOf(lane);
    if (!stats || stats.p50_transit_days === null) return null;
    return { median_transit_days: stats.p50_transit_days, sample_size: stats.sample_size };
  }

  async lanesBetween(originPrefix: string, destinationPrefix: string, mode: KeyMode): Promise<WindowedLaneStats[]> {
    const suffix = `:${originPrefix}:${destinationPrefix}`;
    const out: WindowedLaneStats[] = [];
    for (const lane of this.lanes.keys()) {
      if (!lane.endsWith(suffix) || lane.startsWith('test:') !== (mode === 'test')) continue;
      const stats = this.statsOf(lane);
      if (stats && stats.closed > 0) out.push(stats);
    }
    return out;
  }

  closures(): LaneClosure[] {
    return [...this.lanes.values()].flatMap((shipments) => [...shipments.values()]);
  }
}
