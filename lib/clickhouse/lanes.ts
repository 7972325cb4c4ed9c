/**
 * Lane benchmarks in ClickHouse (decisions.md "Lane benchmark"): recomputed from `shipments` into
 * `lane_benchmarks` by the normalizer (or a scheduled job), read by the API through a small cache.
 */
import type { LaneStats, LaneStatsSource } from '../lanes/index.ts';
import type { ClickHouseClient } from './client.ts';
import { clickHouseErrorInfo } from './client.ts';
import { toClickHouseDateTime } from './datetime.ts';
import { sqlInt, sqlString } from './sql.ts';

export interface RefreshResult {
  /** Lanes written (every lane with at least one delivered shipment). */
  lanes: number;
  /** Epoch ms stamped on the rows (updated_at, and the ReplacingMergeTree version). */
  updatedAtMs: number;
}

/**
 * Recomputes every lane's median transit days and sample size from the latest row per carrier+AWB
 * (argMax by version: no FINAL, so it is exact before merges too) of delivered shipments with a
 * lane. Sandbox (test-mode) shipments never mix with real ones: their lanes are keyed `test:<lane>`
 * (see `laneKey` in lib/lanes), so trk_test_ lookups see sandbox benchmarks and live lookups real
 * ones. The median is exact and matches the embedded LaneBook: the middle value, or the mean of
 * the middle two (ClickHouse's median() samples above 8,192 values and never averages). Lanes under
 * 30 samples are written too. One INSERT ... SELECT: readers see the old or the new row per lane.
 */
export async function refreshLaneBenchmarks(client: ClickHouseClient, options: { nowMs?: number } = {}): Promise<RefreshResult> {
  const nowMs = options.nowMs ?? Date.now();
  const updatedAt = sqlString(toClickHouseDateTime(nowMs));
  await client.command({
    query: `
      INSERT INTO lane_benchmarks (lane, carrier, origin_prefix, destination_prefix, median_transit_days, sample_size, updated_at, version)
      SELECT
        if(lane_mode = 'test', concat('test:', plain_lane), plain_lane) AS lane,
        splitByChar(':', plain_lane)[1] AS carrier,
        splitByChar(':', plain_lane)[2] AS origin_prefix,
        splitByChar(':', plain_lane)[3] AS destination_prefix,
        (sorted[intDiv(n + 1, 2)] + sorted[intDiv(n, 2) + 1]) / 2 AS median_transit_days,
        n AS sample_size,
        toDateTime(${updatedAt}, 'UTC') AS updated_at,
        toUInt64(${sqlInt(nowMs)}) AS version
      FROM
      (
        -- Distinct inner names: a SELECT alias is visible in WHERE, so "assumeNotNull(lane) AS lane"
        -- would turn "isNotNull(lane)" into a test of the alias, always true.
        SELECT shipment_mode AS lane_mode, assumeNotNull(latest_lane) AS plain_lane,
          arraySort(groupArray(assumeNotNull(latest_days))) AS sorted, toUInt32(length(sorted)) AS n
        FROM
        (
          SELECT shipment_mode, tupleElement(latest, 1) AS latest_lane, tupleElement(latest, 2) AS latest_stage, tupleElement(latest, 3) AS latest_days
          FROM
          (
            -- One tuple, not one argMax per column: argMax skips NULL arguments, which would take a
            -- lane or transit_days from an older row of the shipment.
            SELECT mode AS shipment_mode, argMax(tuple(lane, stage, transit_days), tuple(version, ingest_version)) AS latest
            FROM shipments
            GROUP BY carrier, awb, mode
          )
        )
        WHERE latest_stage = 'delivered' AND isNotNull(latest_lane) AND isNotNull(latest_days)
        GROUP BY shipment_mode, latest_lane
      )`,
  });
  const result = await client.query({
    query: `SELECT count() AS lanes FROM lane_benchmarks WHERE version = toUInt64(${sqlInt(nowMs)})`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ lanes: number | string }>();
  return { lanes: Number(row?.lanes ?? 0), updatedAtMs: nowMs };
}

/** The newest stored benchmark of `lane`, null when the lane has none. No cache. */
export async function readLaneBenchmark(client: ClickHouseClient, lane: string, options: { signal?: AbortSignal } = {}): Promise<LaneStats | null> {
  const result = await client.query({
    query: `SELECT argMax(median_transit_days, version) AS median, argMax(sample_size, version) AS n
      FROM lane_benchmarks WHERE lane = ${sqlString(lane)} GROUP BY lane`,
    format: 'JSONEachRow',
    abort_signal: options.signal,
  });
  const [row] = await result.json<{ median: number; n: number | string }>();
  return row ? { median_transit_days: Number(row.median), sample_size: Number(row.n) } : null;
}

export interface LaneSourceLogger {
  warn(obj: object, msg: string): void;
}

export interface ClickHouseLaneSourceOptions {
  /** How long a lane's stats (or their absence) are served from memory. Default 60,000 ms. */
  ttlMs?: number;
  /** After a failed read, how long the old value (or null) is served before asking again. Default 5,000 ms. */
  errorTtlMs?: number;
  /** A lookup never waits longer than this for ClickHouse. Default 1,000 ms. */
  timeoutMs?: number;
  /** Lanes kept in memory; the least recently used go first. Default 50,000. */
  maxEntries?: number;
  /** Clock (tests). */
  now?: () => number;
  logger?: LaneSourceLogger;
}

interface Entry {
  value: LaneStats | null;
  expiresAt: number;
  loading: Promise<LaneStats | null> | null;
}

/**
 * LaneStatsSource over `lane_benchmarks` for the API: each lane is read at most once per TTL
 * (concurrent lookups share one query), so lookups do not query ClickHouse each time. When
 * ClickHouse fails or is slow the last known value is served (null if none): a benchmark is an
 * enrichment, never a reason to fail a lookup.
 */
export class ClickHouseLaneSource implements LaneStatsSource {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly errorTtlMs: number;
  private readonly timeoutMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Queries sent to ClickHouse (tests and metrics). */
  reads = 0;

  private readonly client: ClickHouseClient;
  private readonly options: ClickHouseLaneSourceOptions;
  constructor(
    client: ClickHouseClient,
    options: ClickHouseLaneSourceOptions = {},
  ) {
    this.client = client;
    this.options = options;
    this.ttlMs = options.ttlMs ?? 60_000;
    this.errorTtlMs = options.errorTtlMs ?? 5_000;
    this.timeoutMs = options.timeoutMs ?? 1_000;
    this.maxEntries = Math.max(1, options.maxEntries ?? 50_000);
    this.now = options.now ?? Date.now;
  }

  async get(lane: string): Promise<LaneStats | null> {
    const entry = this.entries.get(lane);
    if (entry) {
      // Map order is insertion order: re-inserting marks the lane recently used.
      this.entries.delete(lane);
      this.entries.set(lane, entry);
      if (entry.loading) return entry.loading;
      if (entry.expiresAt > this.now()) return entry.value;
    }
    const current: Entry = entry ?? { value: null, expiresAt: 0, loading: null };
    current.loading = this.load(lane, current);
    if (!entry) this.remember(lane, current);
    return current.loading;
  }

  /** Forgets cached lanes (all, or one), e.g. right after refreshLaneBenchmarks in the same process. */
  invalidate(lane?: string): void {
    if (lane === undefined) this.entries.clear();
    else this.entries.delete(lane);
  }

  private remember(lane: string, entry: Entry): void {
    this.entries.set(lane, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  private async load(lane: string, entry: Entry): Promise<LaneStats | null> {
    this.reads++;
    try {
      entry.value = await readLaneBenchmark(this.client, lane, { signal: AbortSignal.timeout(this.timeoutMs) });
      entry.expiresAt = this.now() + this.ttlMs;
    } catch (err) {
      entry.expiresAt = this.now() + this.errorTtlMs;
      this.options.logger?.warn({ lane, err: clickHouseErrorInfo(err).message }, 'lane benchmark read failed; serving the last known value');
    } finally {
      entry.loading = null;
    }
    return entry.value;
  }
}
