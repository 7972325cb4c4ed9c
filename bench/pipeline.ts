/**
 * The pipeline against the real services (npm run services -- up; KAFKA_BROKERS and CLICKHOUSE_URL,
 * default: those services' addresses, `npm run -s services -- env`), measured side by side in one run:
 *
 * 1. N delivered ten-scan journey polls (unique AWBs) are produced to a throw-away topic, then read
 *    twice from its beginning: (i) by a bare kafkajs consume loop (the ceiling: fetch and decode
 *    only, 2 MiB fetches) and (ii) by the normalizer (NormalizerConsumer + ClickHouseWriter with
 *    the normalizer app's own options) into a fresh database, until every row is written. Both rates are counted
 *    from the first batch to the last message (i) / last row written (ii), so the consumer group's
 *    join is left out of both. The normalizer's time is split into normalizing, ClickHouse writes
 *    and the rest (Kafka fetches, offset commits), to show what dominates. (iii) The very rows the
 *    normalizer wrote are then inserted again into a fresh database, pre-encoded, in the same
 *    flushes: ClickHouse insert-only, the physical limit. The ratio is normalizer ÷ that.
 * 2. The lane benchmark at scale: ~10 events per shipment generated inside ClickHouse with
 *    INSERT ... SELECT FROM numbers() (bench/clickhouse-measure.ts generators), then
 *    refreshLaneBenchmarks and uncached readLaneBenchmark calls.
 *
 * BENCH_PIPELINE_VERBOSE=1 prints every flush (size, duration, time in "already stored?" checks).
 *
 * Sizes: BENCH_PIPELINE_POLLS (default 20,000 polls = 200,000 events), BENCH_LANE_SHIPMENTS (default
 * 1,000,000 shipments = 10,000,000 events). The topic and both databases are dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { CompressionTypes, type Kafka } from 'kafkajs';
import { NORMALIZER_WRITER_OPTIONS } from '../apps/normalizer/start.ts';
import { ClickHouseWriter, createClickHouseClient, migrate, readLaneBenchmark, refreshLaneBenchmarks, resolveTarget, type ClickHouseClient } from '../lib/clickhouse/index.ts';
import { generateEvents, generateShipments } from './clickhouse-measure.ts';
import { sqlIdentifier } from '../lib/clickhouse/sql.ts';
import { toClickHouseDateTime } from '../lib/clickhouse/datetime.ts';
import { jsonEachRowText } from '../lib/clickhouse/json-each-row.ts';
import type { PollRows } from '../lib/clickhouse/rows.ts';
import { WRITER_TABLES, type WriterTable } from '../lib/clickhouse/writer.ts';
import { createKafka } from '../lib/kafka/client.ts';
import { pollKey } from '../lib/kafka/topics.ts';
import { DEFAULT_CONSUMER_TUNING, NormalizerConsumer } from '../lib/pipeline/normalizer.ts';
import { loadProduct } from '../lib/product/index.ts';
import { CORES, normalizeOnThreads } from './normalize-threads.ts';
import { JOURNEYS, journeyPoll } from '../lib/testutil/polls.ts';
import type { BenchResult } from './report.ts';
import { progressLog } from './harness.ts';
import { round } from './stats.ts';
import { urlOf } from '../test/services/ports.ts';
import { PIDFILE as CLICKHOUSE_PIDFILE } from '../test/services/clickhouse.ts';

export const TARGET_POLLS_PER_SECOND = 5_000;
export const TARGET_RATIO = 0.5;

const BROKERS = process.env.KAFKA_BROKERS ?? urlOf('kafka');
const CLICKHOUSE_URL = process.env.CLICKHOUSE_URL ?? urlOf('clickhouse');
const POLLS = Number(process.env.BENCH_PIPELINE_POLLS ?? 20_000);
const SHIPMENTS = Number(process.env.BENCH_LANE_SHIPMENTS ?? 1_000_000);
const PARTITIONS = 6;

const progress = progressLog('pipeline');

/**
 * CPU seconds used so far by the ClickHouse server `npm run services` started (its pid file, then
 * /proc/<pid>/stat utime + stime in USER_HZ = 100 ticks per second); null for any other server.
 */
function clickHouseCpuSeconds(): number | null {
  try {
    const pid = readFileSync(CLICKHOUSE_PIDFILE, 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name's closing parenthesis start at field 3 (state): utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** ClickHouse CPU µs per poll between two readings (null when unknown). */
function perPoll(before: number | null, after: number | null, polls: number): number | null {
  return before === null || after === null ? null : (1e6 * (after - before)) / polls;
}

async function countOf(client: ClickHouseClient, sql: string): Promise<number> {
  const [row] = await (await client.query({ query: sql, format: 'JSONEachRow' })).json<{ c: string | number }>();
  return Number(row?.c ?? NaN);
}

/** Produces the polls as KafkaBus does (key carrier:AWB, header mode, no compression). */
async function produce(kafka: Kafka, topic: string, values: { key: string; value: string }[]): Promise<number> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const started = performance.now();
  try {
    const chunk = 1_000;
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < values.length; i += chunk) {
      inFlight.push(producer.send({
        topic, compression: CompressionTypes.None,
        messages: values.slice(i, i + chunk).map((m) => ({ key: m.key, value: m.value, headers: { mode: 'live' } })),
      }));
      if (inFlight.length >= 4) await inFlight.shift();
    }
    await Promise.all(inFlight);
  } finally {
    await producer.disconnect();
  }
  return performance.now() - started;
}

/** (i) A bare consume loop from the beginning: ms from the first batch to the last message. */
async function consumeOnly(kafka: Kafka, topic: string, expected: number): Promise<number> {
  // Fixed at the fetch settings the normalizer used until it stopped awaiting its writes (2 MiB per
  // partition, all six at once): its own 512 KiB fetches suit a pipeline but slow a bare loop
  // (~80,000 against ~150,000-210,000 polls/s), and the ceiling should not move with them.
  const { maxBytes, partitionsConsumedConcurrently } = DEFAULT_CONSUMER_TUNING;
  const maxBytesPerPartition = 2_097_152;
  const consumer = kafka.consumer({ groupId: `bench-consume-${randomBytes(4).toString('hex')}`, maxBytes, maxBytesPerPartition });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let count = 0;
  let firstAt = 0;
  let lastAt = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => { finish = resolve; });
  await consumer.run({
    partitionsConsumedConcurrently,
    eachBatch: async ({ batch }) => {
      if (firstAt === 0) firstAt = performance.now();
      count += batch.messages.length;
      if (count >= expected) {
        lastAt = performance.now();
        finish();
      }
    },
  });
  await finished;
  await consumer.disconnect();
  return lastAt - firstAt;
}

interface NormalizerRun {
  ms: number;
  events: number;
  normalizeMs: number;
  writeMs: number;
  checkMs: number;
  batches: number;
  flushes: number;
  /** The very rows the normalizer handed to its writer, in order, and each flush's rows per table. */
  rows: PollRows[];
  flushSizes: Record<WriterTable, number>[];
  /** CPU time of this process (all its threads) from the first batch to the last row written. */
  cpuMs: number;
  /** The ClickHouse server's CPU µs per poll meanwhile (null: not the server npm run services started). */
  clickHouseCpuPerPoll: number | null;
}

/** (ii) The normalizer from the beginning into `database`: ms from the first batch to the last row written. */
async function normalizeAll(kafka: Kafka, topic: string, database: string, expected: number): Promise<NormalizerRun> {
  const target = resolveTarget(CLICKHOUSE_URL, database);
  await migrate(target);
  const client = createClickHouseClient(target);
  const product = loadProduct();
  let writeMs = 0;
  let checkMs = 0;
  let flushes = 0;
  const captured: PollRows[] = [];
  const flushSizes: Record<WriterTable, number>[] = [];
  const writer = new ClickHouseWriter(client, {
    ...NORMALIZER_WRITER_OPTIONS,
    onFlush: (report) => {
      flushSizes.push({ ...report.rows });
      if (process.env.BENCH_PIPELINE_VERBOSE) progress(`flush at ${round(performance.now() - firstAt)} ms: ${report.rows.carrier_polls} polls, ${round(report.durationMs)} ms (checks ${round(report.checkMs)} ms)`);
      writeMs += report.durationMs;
      checkMs += report.checkMs;
      flushes++;
      if (report.error) progress(`flush failed: ${report.error.message}`);
    },
  });
  const consumer = new NormalizerConsumer({
    kafka, sink: writer, rules: product.rules, topic,
    groupId: `bench-normalizer-${randomBytes(4).toString('hex')}`,
    resolveCarrier: (name) => product.registry.resolve(name),
    log: (level, message) => { if (level !== 'info') progress(`${level}: ${message}`); },
  });
  // The time of the first batch, and the time from a batch's arrival to its rows reaching the
  // writer: decoding and normalizing, synchronous, so these spans never overlap each other.
  let firstAt = 0;
  let normalizeMs = 0;
  let batches = 0;
  let batchStartedAt = 0;
  let cpuAtFirst: NodeJS.CpuUsage | null = null;
  let clickHouseCpuAtFirst: number | null = null;
  const handleBatch = consumer.flow.handleBatch.bind(consumer.flow);
  consumer.flow.handleBatch = (messages) => {
    batchStartedAt = performance.now();
    if (firstAt === 0) {
      firstAt = batchStartedAt;
      cpuAtFirst = process.cpuUsage();
      clickHouseCpuAtFirst = clickHouseCpuSeconds();
    }
    batches++;
    return handleBatch(messages);
  };
  const write = writer.write.bind(writer);
  writer.write = (rows) => {
    normalizeMs += performance.now() - batchStartedAt;
    write(rows);
    const list = Array.isArray(rows) ? (rows as readonly PollRows[]) : [rows as PollRows];
    for (const r of list) captured.push(r);
  };
  try {
    await consumer.start();
    // Shipments are written last in every flush: when all are in, so are the polls and events.
    while (writer.stats().inserted.shipments < expected) await sleep(5);
    const ms = performance.now() - firstAt;
    const cpu = process.cpuUsage(cpuAtFirst ?? undefined);
    const clickHouseCpuPerPoll = perPoll(clickHouseCpuAtFirst, clickHouseCpuSeconds(), expected);
    const stats = writer.stats();
    if (stats.inserted.carrier_polls !== expected) throw new Error(`normalizer wrote ${stats.inserted.carrier_polls} polls, expected ${expected}`);
    const stored = await countOf(client, 'SELECT count() AS c FROM carrier_polls');
    if (stored !== expected) throw new Error(`carrier_polls holds ${stored} rows, expected ${expected}`);
    return { ms, events: stats.inserted.events, normalizeMs, writeMs, checkMs, batches, flushes, rows: captured, flushSizes, cpuMs: (cpu.user + cpu.system) / 1000, clickHouseCpuPerPoll };
  } finally {
    await consumer.stop();
    await writer.close();
    await client.close();
  }
}

/**
 * (iii) The physical limit: ClickHouse insert-only of the very rows the normalizer wrote, into a
 * fresh database with the same tables, in the same flushes (the same rows per table per flush,
 * tables in the writer's order, one flush at a time), JSONEachRow text encoded before the clock
 * starts. No Kafka, no normalizing, no "already stored?" checks: what this machine's ClickHouse
 * takes at best for this workload. Returns ms from the first insert to the last, and the ClickHouse
 * server's CPU per poll meanwhile (null when it is not the server npm run services started).
 */
async function insertOnly(database: string, rows: readonly PollRows[], flushSizes: readonly Record<WriterTable, number>[]): Promise<{ ms: number; clickHouseCpuPerPoll: number | null }> {
  const target = resolveTarget(CLICKHOUSE_URL, database);
  await migrate(target);
  const client = createClickHouseClient(target);
  const all: Record<WriterTable, object[]> = {
    carrier_polls: rows.map((r) => r.poll),
    events: rows.flatMap((r) => r.events),
    shipments: rows.flatMap((r) => (r.shipment ? [r.shipment] : [])),
  };
  const taken: Record<WriterTable, number> = { carrier_polls: 0, events: 0, shipments: 0 };
  const encoded = flushSizes.map((sizes, i) => {
    // Stamped as the writer stamps a flush.
    const version = Date.now() + i;
    const stamp = { ingested_at: toClickHouseDateTime(version), ingest_version: version };
    return WRITER_TABLES.map((table) => {
      const slice = all[table].slice(taken[table], taken[table] + sizes[table]);
      taken[table] += sizes[table];
      return { table, text: slice.length ? jsonEachRowText(slice, stamp) : '' };
    });
  });
  try {
    const started = performance.now();
    const cpuBefore = clickHouseCpuSeconds();
    for (const flush of encoded) {
      for (const { table, text } of flush) {
        if (!text) continue;
        const { stream } = await client.exec({ query: `INSERT INTO ${table} FORMAT JSONEachRow`, values: Readable.from([text]) });
        await finished(stream.resume());
      }
    }
    const ms = performance.now() - started;
    const clickHouseCpuPerPoll = perPoll(cpuBefore, clickHouseCpuSeconds(), rows.length);
    const stored = await countOf(client, 'SELECT count() AS c FROM carrier_polls');
    if (stored !== rows.length) throw new Error(`insert-only stored ${stored} polls, expected ${rows.length}`);
    return { ms, clickHouseCpuPerPoll };
  } finally {
    await client.close();
  }
}

async function laneBenchmarks(database: string): Promise<BenchResult[]> {
  const target = resolveTarget(CLICKHOUSE_URL, database);
  await migrate(target);
  const client = createClickHouseClient(target, { request_timeout: 600_000 });
  const carriers = Object.keys(JOURNEYS);
  let started = performance.now();
  await generateShipments(client, SHIPMENTS, carriers);
  await generateEvents(client, SHIPMENTS, carriers);
  const generateMs = performance.now() - started;
  const events = await countOf(client, 'SELECT count() AS c FROM events');
  const shipments = await countOf(client, 'SELECT count() AS c FROM shipments');
  progress(`generated ${shipments} shipments and ${events} events in ${round(generateMs / 1000, 1)} s`);

  started = performance.now();
  const refresh = await refreshLaneBenchmarks(client);
  const refreshMs = performance.now() - started;
  started = performance.now();
  await refreshLaneBenchmarks(client);
  const refreshAgainMs = performance.now() - started;

  const lane = `${carriers[0]}:110:400`;
  const stats = await readLaneBenchmark(client, lane);
  if (!stats) throw new Error(`lane ${lane} has no benchmark after the refresh`);
  const reads: number[] = [];
  for (let i = 0; i < 50; i++) {
    started = performance.now();
    await readLaneBenchmark(client, lane);
    reads.push(performance.now() - started);
  }
  reads.sort((a, b) => a - b);
  await client.close();
  return [
    { name: `lane scale: events / shipments generated in ClickHouse`, value: events, unit: `events (${shipments} shipments)`, target: null, pass: null },
    { name: `refreshLaneBenchmarks over ${shipments} shipments (${refresh.lanes} lanes)`, value: round(refreshMs), unit: 'ms', target: null, pass: null },
    { name: 'refreshLaneBenchmarks again (2 versions stored)', value: round(refreshAgainMs), unit: 'ms', target: null, pass: null },
    { name: `readLaneBenchmark uncached, p50 of 50 (${lane}, n=${stats.sample_size})`, value: round(reads[25]!, 1), unit: 'ms', target: null, pass: null },
    { name: 'readLaneBenchmark uncached, max of 50', value: round(reads[49]!, 1), unit: 'ms', target: null, pass: null },
  ];
}

async function dropDatabase(database: string): Promise<void> {
  const admin = createClickHouseClient({ url: CLICKHOUSE_URL });
  try {
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
  } finally {
    await admin.close();
  }
}

export async function benchPipeline(): Promise<BenchResult[]> {
  const run = randomBytes(4).toString('hex');
  const topic = `bench.carrier-polls.${run}`;
  const normalizerDb = `tracking_bench_${run}`;
  const lanesDb = `tracking_bench_lanes_${run}`;
  const insertDb = `tracking_bench_insert_${run}`;
  const kafka = createKafka({ brokers: BROKERS, clientId: `bench-${run}`, log: (level, message) => { if (level === 'error') progress(message); } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }] });

    const carriers = Object.keys(JOURNEYS);
    const polls = Array.from({ length: POLLS }, (_, i) => journeyPoll(carriers[i % carriers.length]!, i));
    const messages = polls.map((p) => ({ key: pollKey(p.carrier, p.awb), value: JSON.stringify(p) }));
    const scans = polls.reduce((n, p) => n + p.scans.length, 0);
    const bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.value), 0);
    const produceMs = await produce(kafka, topic, messages);
    progress(`produced ${POLLS} polls (${scans} scans, ${round(bytes / 1e6, 1)} MB) to ${topic} in ${round(produceMs / 1000, 2)} s`);

    const consumeMs = await consumeOnly(kafka, topic, POLLS);
    const consumeRate = POLLS / (consumeMs / 1000);
    progress(`consume-only: ${round(consumeRate)} polls/s`);

    const normalized = await normalizeAll(kafka, topic, normalizerDb, POLLS);
    const normalizerRate = POLLS / (normalized.ms / 1000);
    const eventRate = normalized.events / (normalized.ms / 1000);
    const inserted = await insertOnly(insertDb, normalized.rows, normalized.flushSizes);
    const insertMs = inserted.ms;
    const insertRate = POLLS / (insertMs / 1000);
    progress(`ClickHouse insert-only: ${round(insertRate)} polls/s (${normalized.flushSizes.length} flushes)`);
    const ratio = normalizerRate / insertRate;
    const share = (ms: number) => round((100 * ms) / normalized.ms);
    progress(`normalizer: ${round(normalizerRate)} polls/s, ${round(eventRate)} events/s (${normalized.batches} batches, ${normalized.flushes} flushes)`);

    // The same polls normalized and encoded on worker threads, with no Kafka and no ClickHouse.
    const values = messages.map((m) => m.value);
    const threadRates = [...new Set([1, CORES])];
    const onThreads: number[] = [];
    for (const threads of threadRates) onThreads.push(await normalizeOnThreads(values, threads));
    progress(`normalizing alone on ${threadRates.join(' / ')} worker threads: ${onThreads.map((r) => round(r)).join(' / ')} polls/s`);

    const lanes = await laneBenchmarks(lanesDb);
    return [
      { name: `polls produced (${POLLS} polls, ${scans} scans, informative)`, value: round(POLLS / (produceMs / 1000)), unit: 'polls/s', target: null, pass: null },
      { name: 'kafkajs consume-only loop (informative)', value: round(consumeRate), unit: 'polls/s', target: null, pass: null },
      { name: 'ClickHouse insert-only of the same rows, same flushes (the limit)', value: round(insertRate), unit: 'polls/s', target: null, pass: null },
      { name: 'normalizer (Kafka → normalize → ClickHouse)', value: round(normalizerRate), unit: 'polls/s', target: `>= ${TARGET_POLLS_PER_SECOND}`, pass: normalizerRate >= TARGET_POLLS_PER_SECOND },
      { name: 'normalizer events written', value: round(eventRate), unit: 'events/s', target: null, pass: null },
      { name: 'normalizer / ClickHouse insert-only', value: round(ratio, 2), unit: 'x', target: `>= ${TARGET_RATIO}`, pass: ratio >= TARGET_RATIO },
      // Flushes run one at a time and normalizing is synchronous, but the two overlap each other
      // (eachBatch returns once its rows are queued, and the next batch is normalized while a flush
      // waits for ClickHouse): shares may add up past 100 %.
      { name: `normalizer wall time (${normalized.batches} batches, ${normalized.flushes} flushes)`, value: round(normalized.ms), unit: 'ms', target: null, pass: null },
      { name: '  of it decoding + normalizing + toRows (event loop busy)', value: share(normalized.normalizeMs), unit: '% of wall', target: null, pass: null },
      { name: '  of it writer flushes (dedupe checks, JSON encoding, inserts)', value: share(normalized.writeMs), unit: '% of wall', target: null, pass: null },
      { name: '    of which "already stored?" checks', value: share(normalized.checkMs), unit: '% of wall', target: null, pass: null },
      { name: 'normalizer CPU per poll (this process, all threads)', value: round((1000 * normalized.cpuMs) / POLLS), unit: 'µs', target: null, pass: null },
      ...(normalized.clickHouseCpuPerPoll === null || inserted.clickHouseCpuPerPoll === null ? [] : [
        { name: 'ClickHouse server CPU per poll: during the normalizer run', value: round(normalized.clickHouseCpuPerPoll), unit: 'µs', target: null, pass: null },
        { name: 'ClickHouse server CPU per poll: during insert-only', value: round(inserted.clickHouseCpuPerPoll), unit: 'µs', target: null, pass: null },
      ]),
      // What a normalizer with its CPU work on worker threads could reach at best, before
      // ClickHouse and Kafka take their share of the same cores (bench/normalize-threads.ts).
      ...threadRates.map((threads, i) => ({ name: `normalizing + encoding alone on ${threads} worker thread${threads > 1 ? 's' : ''} (no Kafka, no ClickHouse; informative)`, value: round(onThreads[i]!), unit: `polls/s (${round(onThreads[i]! / insertRate, 2)} x insert-only)`, target: null, pass: null })),
      ...lanes,
    ];
  } finally {
    await admin.deleteTopics({ topics: [topic] }).catch((err: unknown) => progress(`could not delete ${topic}: ${(err as Error).message}`));
    await admin.disconnect();
    await dropDatabase(normalizerDb);
    await dropDatabase(lanesDb);
    await dropDatabase(insertDb);
  }
}
