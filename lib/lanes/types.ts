import type { LaneStats } from '../insights/index.ts';
import type { KeyMode } from '../schemas/index.ts';

/** Where lookups read lane benchmarks from: the embedded book or ClickHouse's lane_benchmarks. */
export interface LaneStatsSource {
  get(lane: string): Promise<LaneStats | null>;
}

export type { LaneStats };

/**
 * The benchmark key of a lane for a key mode: sandbox (trk_test_) shipments form lanes of their own
 * (`test:<lane>`), so sandbox traffic never skews the benchmarks of real shipments.
 */
export function laneKey(lane: string, mode: KeyMode): string {
  return mode === 'test' ? `test:${lane}` : lane;
}
