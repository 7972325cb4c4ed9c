/**
 * npm run bench -- lanes: the windowed lane refresh at two history sizes with the same window volume
 * (5 M and 50 M closed shipments, 1 M of them in the 90-day window), side by side: refresh time, rows
 * read and peak memory (system.query_log, log_queries on for the refresh's statements), and the
 * latency of the API's lane read (its in-memory snapshot; one query per read for comparison).
 * History is generated inside ClickHouse (INSERT ... SELECT FROM numbers()), in throw-away
 * databases dropped afterwards.
 * BENCH_LANES_SCALES=1000000,10000000 changes the history sizes; BENCH_LANES_WINDOW the window volume.
 */
import { randomBytes } from 'node:crypto';
import { ClickHouseLaneWindowSource, createClickHouseClient, laneKeysBetween, migrate, readLaneStats, refreshLaneStats, resolveTarget, writeClosures, type ClickHouseClient } from '../lib/clickhouse/index.ts';
import type { LaneClosure } from '../lib/lanes/index.ts';
import type { BenchResult } from './report.ts';
import { percentile } from './stats.ts';
import { DAY_S } from '../lib/time/index.ts';
import { urlOf } from '../test/services/ports.ts';

const URL_ = process.env.CLICKHOUSE_URL ?? urlOf('clickhouse');
const CARRIERS = ['bluedart', 'delhivery', 'dtdc', 'ekart', 'indiapost', 'professionalcouriers', 'shadowfax', 'shiprocket', 'shreemaruti', 'speedpost', 'xpressbees'];
/** 11 carriers × 40 × 40 prefixes = 17,600 lanes. */
const PREFIXES = 40;
const NEW_PER_REFRESH = 1_000;
const INCREMENTAL_RUNS = 3;

const prefixOf = (i: number) => String(110 + i * 13).padStart(3, '0');

interface ScaleFigures {
  history: number;
  generateS: number;
  fullMs: number;
  refreshMs: number;
  lanes: number;
  rowsRead: number;
  memoryMiB: number;
  /** The API's lane read (the in-memory snapshot, catching up in the background meanwhile). */
  readP50: number;
  readP99: number;
  /** One lane_stats query per read, as before the snapshot (informative). */
  queryP50: number;
  queryP99: number;
  snapshotLoadMs: number;
  catchUpMs: number;
}

async function queryLog(client: ClickHouseClient, prefix: string): Promise<{ rows: number; memory: number }> {
  await client.command({ query: 'SYSTEM FLUSH LOGS' });
  const result = await client.query({
    query: `SELECT sum(read_rows) AS rows, max(memory_usage) AS memory FROM system.query_log WHERE type = 2 AND query_id LIKE '${prefix}%'`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ rows: string; memory: string }>();
  return { rows: Number(row?.rows ?? 0), memory: Number(row?.memory ?? 0) };
}

/** `count` closures on random lanes, closing over the `spanDays` before `endS`; ClickHouse generates them. */
async function generate(client: ClickHouseClient, count: number, endS: number, spanDays: number): Promise<void> {
  const carriers = `[${CARRIERS.map((c) => `'${c}'`).join(',')}]`;
  const prefixes = `[${Array.from({ length: PREFIXES }, (_, i) => `'${prefixOf(i)}'`).join(',')}]`;
  const span = spanDays * DAY_S;
  await client.command({
    query: `INSERT INTO lane_closures
      SELECT concat(c, ':', o, ':', d) AS lane, c AS carrier, o AS origin_prefix, d AS destination_prefix, 'live' AS mode,
        concat('B', toString(number)) AS awb,
        multiIf(h % 100 < 85, 'delivered', h % 100 < 95, 'rto', 'cancelled') AS outcome,
        toDateTime(${endS} - ${span} + intDiv(number * ${span}, ${count}), 'UTC') AS closed_at,
        if(outcome = 'delivered', 1 + (h % 9000) / 1000, NULL) AS transit_days,
        if(outcome = 'delivered' AND h % 7 != 0, toUInt8(h % 5 != 0), NULL) AS on_time,
        if(outcome = 'delivered', toUInt8(h % 6 != 0), NULL) AS first_attempt,
        if(h % 6 = 0, ['customer_unavailable', 'refused'], emptyArrayString()) AS ndr_reasons,
        toUInt64(1) AS version, now() AS ingested_at
      FROM (SELECT number, intHash64(number) AS h, ${carriers}[h % ${CARRIERS.length} + 1] AS c,
        ${prefixes}[intDiv(h, 16) % ${PREFIXES} + 1] AS o, ${prefixes}[intDiv(h, 1024) % ${PREFIXES} + 1] AS d FROM numbers(${count}))`,
    clickhouse_settings: { max_insert_block_size: '1048576' } as never,
  });
}

async function measureScale(history: number, windowVolume: number): Promise<ScaleFigures> {
  const database = `tracking_bench_lanes_${randomBytes(4).toString('hex')}`;
  const target = resolveTarget(URL_, database);
  await migrate(target);
  // Generating 50 M rows takes minutes on two cores: no 30 s request limit here.
  const client = createClickHouseClient(target, { request_timeout: 1_800_000 });
  try {
    const nowS = Math.floor(Date.now() / 1000);
    const spanDays = Math.round((90 * history) / windowVolume);
    let t = Date.now();
    await generate(client, history, nowS, spanDays);
    const generateS = (Date.now() - t) / 1000;
    t = Date.now();
    await refreshLaneStats(client, { nowMs: nowS * 1000, full: true });
    const fullMs = Date.now() - t;
    // The API's source: the first read loads every lane, each later one the rows of newer refreshes.
    const source = new ClickHouseLaneWindowSource(client, { carriers: CARRIERS, ttlMs: 200 });
    t = performance.now();
    await source.catchUp();
    const snapshotLoadMs = performance.now() - t;
    const catchUps: number[] = [];
    // Steady state: each minute NEW_PER_REFRESH shipments close, then the refresh runs a minute on.
    const times: number[] = [];
    let rowsRead = 0;
    let memory = 0;
    let lanes = 0;
    for (let run = 1; run <= INCREMENTAL_RUNS; run++) {
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // touches are whole seconds
      const nowMs = (nowS + 60 * run) * 1000;
      const fresh: LaneClosure[] = Array.from({ length: NEW_PER_REFRESH }, (_, i) => {
        const c = CARRIERS[(i * 7 + run) % CARRIERS.length]!;
        const lane = `${c}:${prefixOf((i * 3 + run) % PREFIXES)}:${prefixOf((i * 11) % PREFIXES)}`;
        return { lane, carrier: c, awb: `N${run}-${i}`, mode: 'live', outcome: 'delivered', closedAtS: nowS + 60 * run - 30, transitDays: 2 + (i % 50) / 10, onTime: 1, firstAttempt: 1, ndrReasons: [], version: 2 };
      });
      await writeClosures(client, fresh, Date.now());
      const prefix = `bench-lanes-${database}-${run}`;
      const started = Date.now();
      const result = await refreshLaneStats(client, { nowMs, marginS: 0, queryIdPrefix: prefix });
      times.push(Date.now() - started);
      const log = await queryLog(client, prefix);
      rowsRead = Math.max(rowsRead, log.rows);
      memory = Math.max(memory, log.memory);
      lanes = result.lanes;
      t = performance.now();
      await source.catchUp();
      catchUps.push(performance.now() - t);
    }
    // The API's read: 3,000 origin/destination pairs from the snapshot; with ttlMs 200 catch-up
    // reads keep running in the background meanwhile, and their parsing delays some reads.
    const reads: number[] = [];
    for (let i = 0; i < 3_000; i++) {
      const started = performance.now();
      await source.lanesBetween(prefixOf(i % PREFIXES), prefixOf((i * 7) % PREFIXES), 'live');
      reads.push(performance.now() - started);
      if (i % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 5)); // let catch-ups start
    }
    // Informative: one lane_stats query per read (every carrier's lane of the pair).
    const queries: number[] = [];
    for (let i = 0; i < 300; i++) {
      const started = performance.now();
      await readLaneStats(client, laneKeysBetween(CARRIERS, prefixOf(i % PREFIXES), prefixOf((i * 7) % PREFIXES), 'live'), 90);
      queries.push(performance.now() - started);
    }
    queries.sort((a, b) => a - b);
    catchUps.sort((a, b) => a - b);
    reads.sort((a, b) => a - b);
    times.sort((a, b) => a - b);
    return { history, generateS, fullMs, refreshMs: times[Math.floor(times.length / 2)]!, lanes, rowsRead, memoryMiB: memory / 1048576,
      readP50: percentile(reads, 50), readP99: percentile(reads, 99), queryP50: percentile(queries, 50), queryP99: percentile(queries, 99),
      snapshotLoadMs, catchUpMs: catchUps[Math.floor(catchUps.length / 2)]! };
  } finally {
    await client.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => undefined);
    await client.close();
  }
}

export async function benchLanes(): Promise<BenchResult[]> {
  const scales = (process.env.BENCH_LANES_SCALES ?? '5000000,50000000').split(',').map(Number);
  const windowVolume = Number(process.env.BENCH_LANES_WINDOW ?? 1_000_000);
  const figures: ScaleFigures[] = [];
  for (const history of scales) {
    const f = await measureScale(history, windowVolume);
    console.log(`  ${(history / 1e6).toFixed(0)} M history: generated in ${f.generateS.toFixed(1)} s; full refresh ${f.fullMs} ms; incremental ${f.refreshMs} ms (${f.lanes} lanes), ${f.rowsRead} rows read, ${f.memoryMiB.toFixed(1)} MiB peak; API lane read p50 ${f.readP50.toFixed(3)} ms p99 ${f.readP99.toFixed(3)} ms (snapshot load ${f.snapshotLoadMs.toFixed(0)} ms, catch-up after a refresh ${f.catchUpMs.toFixed(0)} ms); one query per read p50 ${f.queryP50.toFixed(2)} ms p99 ${f.queryP99.toFixed(2)} ms`);
    figures.push(f);
  }
  const results: BenchResult[] = [];
  for (const f of figures) {
    const m = `${(f.history / 1e6).toFixed(0)} M`;
    results.push(
      { name: `${m}: incremental refresh (${NEW_PER_REFRESH} new closures, median of ${INCREMENTAL_RUNS})`, value: f.refreshMs, unit: 'ms', target: null, pass: null },
      { name: `${m}: rows read by the refresh`, value: f.rowsRead, unit: 'rows', target: null, pass: null },
      { name: `${m}: peak query memory of the refresh`, value: Number(f.memoryMiB.toFixed(1)), unit: 'MiB', target: null, pass: null },
      { name: `${m}: full refresh (first run, all ${windowVolume} window rows)`, value: f.fullMs, unit: 'ms', target: null, pass: null },
      { name: `${m}: API lane read p99 (snapshot, catching up meanwhile)`, value: Number(f.readP99.toFixed(3)), unit: 'ms', target: '<= 10', pass: f.readP99 <= 10 },
      { name: `${m}: snapshot catch-up after a refresh (median)`, value: Number(f.catchUpMs.toFixed(1)), unit: 'ms', target: null, pass: null },
      { name: `${m}: one lane_stats query per read, p99 (before the snapshot)`, value: Number(f.queryP99.toFixed(2)), unit: 'ms', target: null, pass: null },
    );
  }
  if (figures.length >= 2) {
    const [small, big] = [figures[0]!, figures[figures.length - 1]!];
    const ratio = big.refreshMs / small.refreshMs;
    results.push({ name: `refresh time ${(big.history / 1e6).toFixed(0)} M / ${(small.history / 1e6).toFixed(0)} M`, value: Number(ratio.toFixed(2)), unit: 'x', target: '<= 1.5', pass: ratio <= 1.5 });
    results.push({ name: `rows read ${(big.history / 1e6).toFixed(0)} M / ${(small.history / 1e6).toFixed(0)} M`, value: Number((big.rowsRead / small.rowsRead).toFixed(2)), unit: 'x', target: null, pass: null });
  }
  return results;
}
