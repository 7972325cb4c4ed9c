/**
 * Windowed lane statistics in ClickHouse (contracts.md "Lanes"; design and cost model in README.md
 * "Lane statistics"). `refreshLaneStats` recomputes into `lane_stats` only the lanes that received
 * closures since the previous refresh or lost some to the window's slide; `readLaneStats` reads
 * lanes, and lanes-snapshot.ts keeps them in memory for the lanes API. The SQL computes what
 * lib/lanes/window.ts `laneStatsOf` computes, with the same arithmetic in the same order, so the
 * embedded default gives the same numbers.
 */
import { DEFAULT_WINDOW_DAYS, laneParts, type WindowedLaneStats } from '../lanes/index.ts';
import type { ClickHouseClient } from './client.ts';
import { toClickHouseDateTime } from './datetime.ts';
import { sqlInt, sqlString, sqlStringList } from './sql.ts';
import type { KeyMode } from '../schemas/index.ts';

export interface LaneRefreshOptions {
  nowMs?: number;
  windowDays?: number;
  /** Touches this much older than the previous refresh are read again (insert delays, clock skew). Default 300 s. */
  marginS?: number;
  /** Also write lane_benchmarks (the lookup's benchmark) from the window. Default true. */
  benchmarks?: boolean;
  /** Recompute every lane of the window (the first refresh of a window length always does). */
  full?: boolean;
  /** Prefix of each statement's query_id and `log_queries` on (bench reads system.query_log). */
  queryIdPrefix?: string;
}

export interface LaneRefreshResult {
  full: boolean;
  /** Lanes recomputed (rows written to lane_stats). */
  lanes: number;
  windowEndMs: number;
  /** lane_stats.version of the rows written: the wall clock at the start, in ms. */
  version: number;
  durationMs: number;
}

/** Lanes per statement: keeps the IN list well under 18.16's 256 KiB max_query_size. */
const LANES_PER_STATEMENT = 2_000;
/** Touch partitions (days) kept: older ones are dropped by the refresh. */
const TOUCH_DAYS_KEPT = 7;

/**
 * The aggregate of lane_stats over `closures` (one row per shipment: lane, c_outcome, c_transit,
 * c_on_time, c_first, c_reasons). p50: mean of the middle two (the spec's median); p90: type-7
 * interpolation at rank 9(n−1)/10 kept in integers (lib/lanes/window.ts); rates NULL on a zero
 * denominator; shares = count of a reason / failed attempts. 1-based array indexes.
 */
function statsSelect(closures: string, windowDays: number, windowEndS: number, version: number): string {
  return `
    SELECT
      lane,
      splitByChar(':', replaceOne(lane, 'test:', ''))[1] AS carrier,
      splitByChar(':', replaceOne(lane, 'test:', ''))[2] AS origin_prefix,
      splitByChar(':', replaceOne(lane, 'test:', ''))[3] AS destination_prefix,
      if(startsWith(lane, 'test:'), 'test', 'live') AS mode,
      toUInt16(${sqlInt(windowDays)}) AS window_days,
      toDateTime(${sqlInt(windowEndS)}, 'UTC') AS window_end,
      toUInt32(count()) AS closed,
      arraySort(groupArrayIf(assumeNotNull(c_transit), c_outcome = 'delivered' AND isNotNull(c_transit))) AS sorted,
      toUInt32(length(sorted)) AS sample_size,
      if(sample_size = 0, NULL, (sorted[intDiv(sample_size + 1, 2)] + sorted[intDiv(sample_size, 2) + 1]) / 2) AS p50_transit_days,
      if(sample_size = 0, NULL, sorted[intDiv(9 * (sample_size - 1), 10) + 1]
        + ((9 * (sample_size - 1)) % 10) / 10 * (sorted[least(intDiv(9 * (sample_size - 1), 10) + 2, sample_size)] - sorted[intDiv(9 * (sample_size - 1), 10) + 1])) AS p90_transit_days,
      countIf(c_outcome = 'delivered') AS delivered,
      countIf(c_outcome = 'rto') AS returned,
      countIf(isNotNull(c_on_time)) AS edd_known,
      if(edd_known = 0, NULL, countIf(c_on_time = 1) / edd_known) AS on_time_rate,
      if(delivered = 0, NULL, countIf(c_first = 1) / delivered) AS first_attempt_rate,
      if(delivered + returned = 0, NULL, returned / (delivered + returned)) AS rto_rate,
      groupArrayArray(c_reasons) AS all_reasons,
      toUInt32(length(all_reasons)) AS failed_attempts,
      arraySort(groupUniqArrayArray(c_reasons)) AS reasons,
      arrayMap(r -> countEqual(all_reasons, r) / failed_attempts, reasons) AS shares,
      toDateTime(${sqlInt(Math.floor(version / 1000))}, 'UTC') AS updated_at,
      toUInt64(${sqlInt(version)}) AS version
    FROM ${closures}
    GROUP BY lane`;
}

/** The columns statsSelect's rows are inserted into, in its order (helpers like `sorted` left out). */
const STATS_COLUMNS = `lane, carrier, origin_prefix, destination_prefix, mode, window_days, window_end, closed, sample_size,
  p50_transit_days, p90_transit_days, on_time_rate, first_attempt_rate, rto_rate, failed_attempts,
  \`ndr_reasons.reason\`, \`ndr_reasons.share\`, updated_at, version`;
const STATS_VALUES = `lane, carrier, origin_prefix, destination_prefix, mode, window_days, window_end, closed, sample_size,
  p50_transit_days, p90_transit_days, on_time_rate, first_attempt_rate, rto_rate, failed_attempts, reasons, shares, updated_at, version`;

/**
 * One row per shipment of lane_closures (its newest version) closed at or after `startS`, for the
 * lanes listed (all when null). The closed_at filter prunes partitions to the window's months; the
 * lane list uses the sort key.
 */
export function closuresSource(startS: number, lanes: readonly string[] | null): string {
  const laneFilter = lanes ? ` AND lane IN ${sqlStringList(lanes)}` : '';
  return `(
      SELECT lane, tupleElement(c, 1) AS c_outcome, tupleElement(c, 2) AS c_closed_at, tupleElement(c, 3) AS c_transit,
        tupleElement(c, 4) AS c_on_time, tupleElement(c, 5) AS c_first, tupleElement(c, 6) AS c_reasons
      FROM
      (
        SELECT lane, argMax(tuple(outcome, closed_at, transit_days, on_time, first_attempt, ndr_reasons), version) AS c
        FROM lane_closures
        WHERE closed_at >= toDateTime(${sqlInt(startS)}, 'UTC')${laneFilter}
        GROUP BY lane, carrier, awb
      )
      WHERE c_closed_at >= toDateTime(${sqlInt(startS)}, 'UTC')
    )`;
}

interface PreviousRefresh {
  windowEndS: number;
  refreshedAtS: number;
}

/** Per statement: a query_id and log_queries when the caller measures (bench), else nothing. */
interface Settings {
  query_id?: string;
  clickhouse_settings?: { log_queries: 1 };
}

async function rowsOf<T>(client: ClickHouseClient, query: string, settings: Settings): Promise<T[]> {
  const result = await client.query({ query, format: 'JSONEachRow', ...settings });
  return result.json<T>();
}

async function command(client: ClickHouseClient, query: string, settings: Settings): Promise<void> {
  await client.command({ query, ...settings });
}

async function previousRefresh(client: ClickHouseClient, windowDays: number, settings: Settings): Promise<PreviousRefresh | null> {
  const [row] = await rowsOf<{ n: string | number; e: string | number; r: string | number }>(client,
    `SELECT count() AS n, toUInt32(max(window_end)) AS e, toUInt32(argMax(refreshed_at, tuple(window_end, refreshed_at))) AS r
     FROM lane_refreshes WHERE window_days = ${sqlInt(windowDays)}`, settings);
  return row && Number(row.n) > 0 ? { windowEndS: Number(row.e), refreshedAtS: Number(row.r) } : null;
}

/**
 * Lanes whose window figures may have changed since `previous`: those touched (closures inserted)
 * since the previous refresh began, minus a margin, read through lane_touches' sort key; and those
 * with closures that left the window since its previous end, read from the one or two monthly
 * partitions of lane_closures that span that slide.
 */
async function changedLanes(
  client: ClickHouseClient, previous: PreviousRefresh, startS: number, windowDays: number, marginS: number, settings: (n: string) => Settings,
): Promise<string[]> {
  const touchedFrom = sqlInt(Math.max(0, previous.refreshedAtS - marginS));
  const touched = await rowsOf<{ lane: string }>(client,
    `SELECT DISTINCT lane FROM lane_touches WHERE touched_at >= toDateTime(${touchedFrom}, 'UTC')`, settings('touched'));
  const previousStartS = previous.windowEndS - windowDays * 86_400;
  const aged = previousStartS < startS
    ? await rowsOf<{ lane: string }>(client,
      `SELECT DISTINCT lane FROM lane_closures
       WHERE closed_at >= toDateTime(${sqlInt(Math.max(0, previousStartS))}, 'UTC') AND closed_at < toDateTime(${sqlInt(startS)}, 'UTC')`,
      settings('aged'))
    : [];
  return [...new Set([...touched, ...aged].map((r) => r.lane))].sort();
}

/**
 * Recomputes lane_stats for the lanes whose window changed (all lanes of the window on the first
 * refresh of a window length, or with `full`). Rows of other lanes are left as they are: their
 * figures would come out the same. A lane left with no closure in the window gets a row of zeros
 * and nulls. Then lane_benchmarks gets the same lanes' p50 and sample size (the lookup's benchmark).
 */
export async function refreshLaneStats(client: ClickHouseClient, options: LaneRefreshOptions = {}): Promise<LaneRefreshResult> {
  const started = Date.now();
  const nowMs = options.nowMs ?? started;
  const windowDays = options.windowDays ?? DEFAULT_WINDOW_DAYS;
  const endS = Math.floor(nowMs / 1000);
  const startS = endS - windowDays * 86_400;
  // The wall clock, not nowMs: each refresh's rows must outrank the previous refresh's.
  const version = started;
  let statement = 0;
  const settings = (name: string): Settings =>
    options.queryIdPrefix ? { clickhouse_settings: { log_queries: 1 }, query_id: `${options.queryIdPrefix}-${++statement}-${name}` } : {};
  const previous = options.full ? null : await previousRefresh(client, windowDays, settings('previous'));
  const full = previous === null;
  const lanes = previous ? await changedLanes(client, previous, startS, windowDays, options.marginS ?? 300, settings) : null;

  const insertStats = (chunk: readonly string[] | null) => command(client,
    `INSERT INTO lane_stats (${STATS_COLUMNS}) SELECT ${STATS_VALUES} FROM (${statsSelect(closuresSource(startS, chunk), windowDays, endS, version)})`,
    settings('stats'));
  if (!lanes) await insertStats(null);
  else for (let i = 0; i < lanes.length; i += LANES_PER_STATEMENT) await insertStats(lanes.slice(i, i + LANES_PER_STATEMENT));

  const written = new Set((await rowsOf<{ lane: string }>(client,
    `SELECT lane FROM lane_stats WHERE window_days = ${sqlInt(windowDays)} AND version = ${sqlInt(version)}`, settings('written'))).map((r) => r.lane));
  // Lanes recomputed to nothing (every closure left the window): a row of zeros replaces the old one.
  const emptied = lanes ? lanes.filter((lane) => !written.has(lane)) : [];
  if (emptied.length) {
    await client.insert({
      table: 'lane_stats',
      format: 'JSONEachRow',
      values: emptied.map((lane) => emptyStatsRow(lane, windowDays, endS, version)),
      ...settings('emptied'),
    });
  }
  if (options.benchmarks ?? true) {
    await command(client, `INSERT INTO lane_benchmarks (lane, carrier, origin_prefix, destination_prefix, median_transit_days, sample_size, updated_at, version)
      SELECT lane, carrier, origin_prefix, destination_prefix, ifNull(p50_transit_days, 0), sample_size, updated_at, version
      FROM lane_stats WHERE window_days = ${sqlInt(windowDays)} AND version = ${sqlInt(version)}`, settings('benchmarks'));
  }
  await dropOldTouches(client, endS, settings);
  const durationMs = Date.now() - started;
  const lanesWritten = written.size + emptied.length;
  await client.insert({
    table: 'lane_refreshes',
    format: 'JSONEachRow',
    values: [{
      window_days: windowDays, window_end: toClickHouseDateTime(endS * 1000), refreshed_at: toClickHouseDateTime(started), full: full ? 1 : 0,
      lanes: lanesWritten, duration_ms: durationMs,
    }],
  });
  return { full, lanes: lanesWritten, windowEndMs: endS * 1000, version, durationMs };
}

function emptyStatsRow(lane: string, windowDays: number, endS: number, version: number): Record<string, unknown> {
  return {
    lane, ...laneParts(lane), window_days: windowDays, window_end: toClickHouseDateTime(endS * 1000),
    closed: 0, sample_size: 0, p50_transit_days: null, p90_transit_days: null, on_time_rate: null,
    first_attempt_rate: null, rto_rate: null, failed_attempts: 0, 'ndr_reasons.reason': [], 'ndr_reasons.share': [],
    updated_at: toClickHouseDateTime(Math.floor(version / 1000) * 1000), version,
  };
}

/** Drops lane_touches' day partitions older than TOUCH_DAYS_KEPT (18.16 has no TTL). */
async function dropOldTouches(client: ClickHouseClient, endS: number, settings: (n: string) => Settings): Promise<void> {
  const keepFrom = new Date((endS - TOUCH_DAYS_KEPT * 86_400) * 1000).toISOString().slice(0, 10).replaceAll('-', '');
  const before = sqlString(keepFrom);
  const parts = await rowsOf<{ partition: string }>(client,
    `SELECT DISTINCT partition FROM system.parts WHERE database = currentDatabase() AND table = 'lane_touches' AND active AND partition < ${before}`,
    settings('touch-parts'));
  for (const { partition } of parts) {
    if (!/^\d{8}$/.test(partition)) continue;
    await command(client, `ALTER TABLE lane_touches DROP PARTITION ${partition}`, settings('touch-drop'));
  }
}

/** The lane keys of every carrier for an origin/destination prefix pair and a key mode. */
export function laneKeysBetween(carriers: readonly string[], originPrefix: string, destinationPrefix: string, mode: KeyMode): string[] {
  return carriers.map((c) => `${mode === 'test' ? 'test:' : ''}${c}:${originPrefix}:${destinationPrefix}`);
}

/** The newest lane_stats row per lane among the rows matching `where`, with the version it came from. */
function newestStatsQuery(where: string): string {
  return `SELECT stats_lane AS lane, tupleElement(s, 1) AS closed, tupleElement(s, 2) AS sample_size, tupleElement(s, 3) AS p50, tupleElement(s, 4) AS p90,
        tupleElement(s, 5) AS on_time, tupleElement(s, 6) AS first_attempt, tupleElement(s, 7) AS rto, tupleElement(s, 8) AS failed,
        tupleElement(s, 9) AS reasons, tupleElement(s, 10) AS shares, stats_version AS version
      FROM
      (
        SELECT lane AS stats_lane, argMax(tuple(closed, sample_size, p50_transit_days, p90_transit_days, on_time_rate, first_attempt_rate, rto_rate,
          failed_attempts, ndr_reasons.reason, ndr_reasons.share), version) AS s, max(version) AS stats_version
        FROM lane_stats WHERE ${where}
        GROUP BY lane
      )`;
}

/** The newest lane_stats row of each lane given that has one, as WindowedLaneStats. */
export async function readLaneStats(
  client: ClickHouseClient, lanes: readonly string[], windowDays: number, options: { signal?: AbortSignal } = {},
): Promise<WindowedLaneStats[]> {
  if (lanes.length === 0) return [];
  const result = await client.query({
    query: newestStatsQuery(`window_days = ${sqlInt(windowDays)} AND lane IN ${sqlStringList(lanes)}`),
    format: 'JSONEachRow',
    abort_signal: options.signal,
  });
  const rows = await result.json<StatsRow>();
  return rows.map((r) => statsOfRow(r, windowDays));
}

/**
 * The newest row of each lane of a window length written at `sinceVersion` or later, with its
 * version (lane_stats.version: the wall-clock ms at the start of the refresh that wrote it).
 */
export async function readLaneStatsSince(
  client: ClickHouseClient, windowDays: number, sinceVersion: number, options: { signal?: AbortSignal } = {},
): Promise<Array<{ stats: WindowedLaneStats; version: number }>> {
  const result = await client.query({
    query: newestStatsQuery(`window_days = ${sqlInt(windowDays)} AND version >= ${sqlInt(sinceVersion)}`),
    format: 'JSONEachRow',
    abort_signal: options.signal,
  });
  const rows = await result.json<StatsRow>();
  return rows.map((r) => ({ stats: statsOfRow(r, windowDays), version: Number(r.version) }));
}

interface StatsRow {
  lane: string;
  closed: number | string;
  sample_size: number | string;
  p50: number | null;
  p90: number | null;
  on_time: number | null;
  first_attempt: number | null;
  rto: number | null;
  failed: number | string;
  reasons: string[];
  shares: number[];
  version: number | string;
}

function statsOfRow(r: StatsRow, windowDays: number): WindowedLaneStats {
  const num = (v: number | null) => (v === null ? null : Number(v));
  return {
    lane: r.lane,
    ...laneParts(r.lane),
    window_days: windowDays,
    closed: Number(r.closed),
    sample_size: Number(r.sample_size),
    p50_transit_days: num(r.p50),
    p90_transit_days: num(r.p90),
    on_time_rate: num(r.on_time),
    first_attempt_rate: num(r.first_attempt),
    rto_rate: num(r.rto),
    failed_attempts: Number(r.failed),
    ndr_reasons: r.reasons.map((reason, i) => ({ reason, share: Number(r.shares[i]) })),
  };
}
