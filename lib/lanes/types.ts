import type { LaneStats } from '../insights/index.ts';

/** Where lookups read lane benchmarks from: the embedded book or ClickHouse's lane_benchmarks. */
export interface LaneStatsSource {
  get(lane: string): Promise<LaneStats | null>;
}

export type { LaneStats };
