/**
 * Quick measurements of the ClickHouse side (not a test; numbers for the benchmark write-up):
 *   node bench/clickhouse-measure.ts [--polls 20000] [--shipments 1000000] [--keep]
 * (run it on a quiet machine: the figures are CPU-bound on both sides)
 * 1. writer: journey polls → rows → ClickHouseWriter (default batching) into a fresh database;
 *    events rows/s for a first write and for a full re-delivery (every row a duplicate).
 * 2. scale: `shipments` (1 row per shipment, 80 % delivered) and `events` (10 per shipment) generated
 *    server-side with INSERT ... SELECT FROM numbers(), then refreshLaneBenchmarks, a lane read, and
 *    the writer's per-batch "already stored?" check against that table size.
 * Uses CLICKHOUSE_URL; creates and drops tracking_measure_<random>.
 * `generateShipments` / `generateEvents` are exported for bench/pipeline.ts (the script part runs
 * only when this file is the program).
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { normalizePoll } from '../lib/normalize/index.ts';
import { loadProduct } from '../lib/product/index.ts';
import { JOURNEYS, journeyPoll } from '../lib/testutil/polls.ts';
import { createClickHouseClient, resolveTarget, type ClickHouseClient } from '../lib/clickhouse/client.ts';
import { ClickHouseLaneSource, readLaneBenchmark, refreshLaneBenchmarks } from '../lib/clickhouse/lanes.ts';
import { migrate } from '../lib/clickhouse/migrate.ts';
import { activeShipments } from '../lib/clickhouse/shipments.ts';
import { toRows, type PollRows } from '../lib/clickhouse/rows.ts';
import { ClickHouseWriter } from '../lib/clickhouse/writer.ts';

const log = (line: string) => process.stdout.write(`${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const rate = (n: number, ms: number) => `${Math.round(n / (ms / 1000)).toLocaleString('en-US')}/s`;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

/**
 * `shipments` rows generated server-side (INSERT ... SELECT FROM numbers()): one per number, live
 * mode, `carriers` x 20 origin x 20 destination prefixes (11 carriers: 4,400 lanes), transit 1-8
 * days, 80 % delivered.
 */
export async function generateShipments(client: ClickHouseClient, shipmentCount: number, carriers: readonly string[] = Object.keys(JOURNEYS)): Promise<void> {
  const carrierArray = `[${carriers.map((c) => `'${c}'`).join(', ')}]`;
  await client.command({
    query: `INSERT INTO shipments (carrier, awb, mode, status, stage, is_rto, origin_pincode, destination_pincode, lane, first_scan_at, first_physical_scan_at, last_scan_at, delivered_at, estimated_delivery_at, transit_days, attempts, hub_count, unmapped_scans, updated_at, version, poll_id, mapping_version, ingested_at, ingest_version)
      SELECT carrier, awb, 'live', if(delivered, 'delivered', 'in_transit'), if(delivered, 'delivered', 'in_transit'), 0, origin, destination,
        concat(carrier, ':', substring(origin, 1, 3), ':', substring(destination, 1, 3)),
        first, first, toDateTime(toUInt32(first) + toUInt32(days * 86400)), if(delivered, toDateTime(toUInt32(first) + toUInt32(days * 86400)), NULL), NULL,
        if(delivered, days, NULL), 1, 3, 0, now(), toUInt64(number), toString(number), 'measure', now(), toUInt64(number)
      FROM (
        SELECT number, arrayElement(${carrierArray}, (number % ${carriers.length}) + 1) AS carrier, toString(10000000000 + number) AS awb,
          (intHash32(number) % 10) < 8 AS delivered,
          concat(toString(110 + intHash32(number + 1) % 20), '001') AS origin,
          concat(toString(400 + intHash32(number + 2) % 20), '001') AS destination,
          toDateTime(1790000000 + number % 5000000) AS first,
          1 + (intHash32(number + 3) % 700) / 100 AS days
        FROM numbers(${shipmentCount})
      )`,
  });
}

/** `events` rows generated server-side: ten per shipment of generateShipments (same carriers and AWBs). */
export async function generateEvents(client: ClickHouseClient, shipmentCount: number, carriers: readonly string[] = Object.keys(JOURNEYS)): Promise<void> {
  const carrierArray = `[${carriers.map((c) => `'${c}'`).join(', ')}]`;
  await client.command({
    query: `INSERT INTO events (event_id, carrier, awb, occurred_at, status, code, status_text, description, facility, location, reason_code, raw_status, raw_code, mapping_version, poll_id, ingested_at, ingest_version)
      SELECT substring(hex(MD5(toString(n * 10 + k))), 1, 24), arrayElement(${carrierArray}, (n % ${carriers.length}) + 1), toString(10000000000 + n),
        toDateTime(1790000000 + n % 5000000 + k * 25200), 'in_transit', 'received', 'Received at hub', 'Received at hub', 'Hub', 'Hub', NULL,
        'Received at hub', NULL, 'measure', toString(n), now(), 1
      FROM (SELECT intDiv(number, 10) AS n, number % 10 AS k FROM numbers(${shipmentCount * 10}))`,
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { polls: { type: 'string', default: '20000' }, shipments: { type: 'string', default: '1000000' }, keep: { type: 'boolean', default: false } },
  });
  const pollCount = Number(values.polls);
  const shipmentCount = Number(values.shipments);
  const target = resolveTarget(process.env.CLICKHOUSE_URL, `tracking_measure_${randomBytes(4).toString('hex')}`);
  await migrate(target);
  const client = createClickHouseClient(target, { request_timeout: 600_000 });
  const query = async (sql: string) => (await client.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, unknown>>();
  try {
    log(`database ${target.database} on ${target.url} (${(await query('SELECT version() AS v'))[0]?.v})`);

    // 1. The writer.
    const { rules } = loadProduct();
    const carriers = Object.keys(JOURNEYS);
    const polls = Array.from({ length: pollCount }, (_, i) => journeyPoll(carriers[i % carriers.length]!, i));
    const [rows, convertMs] = await timed(async () => polls.map((p) => toRows(p, normalizePoll(p, rules), rules.mappingVersion)));
    const events = rows.reduce((n, r) => n + r.events.length, 0);
    log(`normalize + toRows: ${polls.length} polls, ${events} events in ${seconds(convertMs)} (${rate(events, convertMs)} events)`);

    const writeAll = async (batch: PollRows[]) => {
      const writer = new ClickHouseWriter(client);
      for (const r of batch) writer.write(r); // one poll at a time, as the normalizer does
      await writer.close();
      return writer.stats();
    };
    const [first, firstMs] = await timed(() => writeAll(rows));
    log(`writer, first write: ${first.inserted.events} events (+${first.inserted.carrier_polls} polls, ${first.inserted.shipments} shipments) in ${seconds(firstMs)} → ${rate(first.inserted.events, firstMs)} events`);
    const [again, againMs] = await timed(() => writeAll(rows));
    log(`writer, re-delivery (all duplicates): ${again.duplicates.events} events skipped, ${again.inserted.events} inserted in ${seconds(againMs)} → ${rate(again.duplicates.events, againMs)} events`);
    const noDedupe = resolveTarget(target.url, `${target.database}_nodedupe`);
    await migrate(noDedupe);
    const plain = createClickHouseClient(noDedupe);
    const [, plainMs] = await timed(async () => {
      const writer = new ClickHouseWriter(plain, { dedupe: false });
      for (const r of rows) writer.write(r);
      await writer.close();
    });
    await plain.command({ query: `DROP DATABASE ${noDedupe.database}` }).catch(() => undefined);
    await plain.close();
    log(`writer without the dedupe check (for comparison): ${events} events in ${seconds(plainMs)} → ${rate(events, plainMs)} events`);

    // 2. Scale: generated server-side.
    await client.command({ query: 'TRUNCATE TABLE events' }).catch(async () => client.command({ query: 'ALTER TABLE events DELETE WHERE 1' }));
    await client.command({ query: 'TRUNCATE TABLE shipments' }).catch(() => undefined);
    const [, shipMs] = await timed(() => generateShipments(client, shipmentCount, carriers));
    const [, eventsMs] = await timed(() => generateEvents(client, shipmentCount, carriers));
    const counts = await query('SELECT (SELECT count() FROM events) AS events, (SELECT count() FROM shipments) AS shipments');
    log(`generated ${counts[0]?.shipments} shipments in ${seconds(shipMs)}, ${counts[0]?.events} events in ${seconds(eventsMs)}`);

    const [refresh, refreshMs] = await timed(() => refreshLaneBenchmarks(client));
    log(`refreshLaneBenchmarks over ${counts[0]?.shipments} shipments: ${refresh.lanes} lanes in ${seconds(refreshMs)}`);
    const [again2, refresh2Ms] = await timed(() => refreshLaneBenchmarks(client));
    log(`refreshLaneBenchmarks again (lane_benchmarks now holds 2 versions): ${again2.lanes} lanes in ${seconds(refresh2Ms)}`);
    const [active, activeMs] = await timed(() => activeShipments(client, 0));
    log(`activeShipments over ${counts[0]?.shipments} shipments: ${active.length} active in ${seconds(activeMs)}`);
    const lane = 'delhivery:110:400';
    const reads: number[] = [];
    for (let i = 0; i < 20; i++) reads.push((await timed(() => readLaneBenchmark(client, lane)))[1]);
    reads.sort((a, b) => a - b);
    log(`readLaneBenchmark (uncached) of ${lane}: ${JSON.stringify(await readLaneBenchmark(client, lane))}, median ${reads[10]!.toFixed(1)} ms, max ${reads[19]!.toFixed(1)} ms over 20`);
    const source = new ClickHouseLaneSource(client);
    await source.get(lane);
    const [, cachedMs] = await timed(async () => {
      for (let i = 0; i < 100_000; i++) await source.get(lane);
    });
    log(`ClickHouseLaneSource.get (cached): ${((cachedMs * 1000) / 100_000).toFixed(2)} µs per lookup (100,000 lookups, ${source.reads} ClickHouse read)`);

    // The writer against the big tables (its "already stored?" check reads their primary key).
    const fresh = Array.from({ length: 5_000 }, (_, i) => journeyPoll(carriers[i % carriers.length]!, 50_000_000 + i)).map((p) => toRows(p, normalizePoll(p, rules), rules.mappingVersion));
    const [big, bigMs] = await timed(() => writeAll(fresh));
    log(`writer into the ${counts[0]?.events}-event table: ${big.inserted.events} events in ${seconds(bigMs)} → ${rate(big.inserted.events, bigMs)} events`);
    const [bigAgain, bigAgainMs] = await timed(() => writeAll(fresh));
    log(`  and its re-delivery: ${bigAgain.duplicates.events} duplicates skipped in ${seconds(bigAgainMs)} → ${rate(bigAgain.duplicates.events, bigAgainMs)} events`);
  } finally {
    if (!values.keep) await client.command({ query: `DROP DATABASE IF EXISTS ${target.database}` });
    await client.close();
  }
}

// Only as a program (node bench/clickhouse-measure.ts); bench/pipeline.ts imports the generators.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
