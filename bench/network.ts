/**
 * npm run bench -- network: the simulated network's history (docs/engineers/network-model.md).
 *
 * 0. Fidelity: BENCH_NETWORK_FIDELITY_JOURNEYS (default 20,000) journeys of a fresh history (seed 1),
 *    each figure of lib/network/fidelity.ts against its published band (PASS inside it). The table
 *    of network-model.md: `node scripts/network/fidelity-table.ts`.
 * 1. Generation: BENCH_NETWORK_JOURNEYS (default 1,000,000) journeys as carrier_poll.v1 polls,
 *    serialized as `sandbox history --out` writes them (JSON lines, not written to disk):
 *    journeys/s and polls/s, and the process's peak RSS.
 * 2. Ingest (the services: KAFKA_BROKERS, CLICKHOUSE_URL, default those of `npm run services`,
 *    `npm run -s services -- env`): BENCH_NETWORK_INGEST_JOURNEYS (default 1,000,000) journeys' polls
 *    produced to a throw-away topic for test mode while the normalizer app (startNormalizer, its
 *    own options) consumes it into a throw-away database: end to end from the first send to the
 *    last shipments row written; then one lane_stats refresh over the whole history.
 *    The topic and the database are dropped afterwards.
 *
 * BENCH_NETWORK_PARTS (default `fidelity,generate,ingest`) picks the parts: `BENCH_NETWORK_PARTS=fidelity`
 * needs no services and prints figures only.
 * A smoke run: BENCH_NETWORK_JOURNEYS=2000 BENCH_NETWORK_INGEST_JOURNEYS=500 npm run bench -- network
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CompressionTypes } from 'kafkajs';
import { startNormalizer } from '../apps/normalizer/start.ts';
import { createClickHouseClient } from '../lib/clickhouse/index.ts';
import { sqlIdentifier } from '../lib/clickhouse/sql.ts';
import { loadCalendar } from '../lib/calendar/index.ts';
import { loadEnv } from '../lib/config/index.ts';
import { createKafka } from '../lib/kafka/client.ts';
import { pollKey } from '../lib/kafka/topics.ts';
import { loadNetworkConfig } from '../lib/network/config.ts';
import { bandText, fidelityRows, inBand } from '../lib/network/fidelity.ts';
import { planHistory } from '../lib/network/history.ts';
import { seededRandom } from '../lib/random/seeded-random.ts';
import { loadPlaces } from '../lib/places/index.ts';
import { historyPolls, SANDBOX_LANE_PINCODES } from '../lib/sandbox/history.ts';
import type { BenchResult } from './report.ts';
import { progressLog } from './harness.ts';
import { round } from './stats.ts';
import { urlOf } from '../test/services/ports.ts';

const BROKERS = process.env.KAFKA_BROKERS ?? urlOf('kafka');
const CLICKHOUSE_URL = process.env.CLICKHOUSE_URL ?? urlOf('clickhouse');
const JOURNEYS = Number(process.env.BENCH_NETWORK_JOURNEYS ?? 1_000_000);
const INGEST_JOURNEYS = Number(process.env.BENCH_NETWORK_INGEST_JOURNEYS ?? 1_000_000);
const FIDELITY_JOURNEYS = Number(process.env.BENCH_NETWORK_FIDELITY_JOURNEYS ?? 20_000);
const PARTS = new Set((process.env.BENCH_NETWORK_PARTS ?? 'fidelity,generate,ingest').split(',').map((part) => part.trim()));
const END = Date.parse('2026-11-27T00:00:00Z');
const HISTORY_DAYS = 90;

const progress = progressLog('network');

function history(shipments: number, seed: number) {
  return historyPolls({ config: loadNetworkConfig(), calendar: loadCalendar(), places: loadPlaces(), shipments, days: HISTORY_DAYS, seed, endMs: END });
}

/** The model's figures against the published bands (lib/network/fidelity.ts). */
function fidelity(): BenchResult[] {
  const config = loadNetworkConfig();
  const plan = { shipments: FIDELITY_JOURNEYS, days: HISTORY_DAYS, seed: 1, endMs: END, sandboxLanes: SANDBOX_LANE_PINCODES, seededRandom };
  const journeys = [...planHistory(plan, config, loadCalendar(), loadPlaces())];
  return fidelityRows(journeys, config).map((row) => ({
    name: row.figure, value: row.value, unit: row.unit, target: `${bandText(row)} (${row.published})`, pass: inBand(row),
  }));
}

async function generate(): Promise<BenchResult[]> {
  // The one-time costs (pincode table, holidays, the carriers' vocabularies) before the clock starts.
  for await (const _ of history(10, 99)) { /* warm up */ }
  let polls = 0;
  let bytes = 0;
  let peakRss = process.memoryUsage().rss;
  const started = performance.now();
  let journeys = 0;
  for await (const { polls: made } of history(JOURNEYS, 1)) {
    for (const poll of made) bytes += JSON.stringify(poll).length + 1;
    polls += made.length;
    if (++journeys % 100_000 === 0) {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      progress(`${journeys} journeys, ${polls} polls in ${round((performance.now() - started) / 1000, 1)} s`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  return [
    { name: `journeys generated (${JOURNEYS.toLocaleString('en-US')}, ${polls.toLocaleString('en-US')} polls)`, value: round(JOURNEYS / seconds), unit: 'journeys/s', target: null, pass: null },
    { name: 'polls generated and serialized', value: round(polls / seconds), unit: 'polls/s', target: null, pass: null },
    { name: 'raw-poll log size', value: round(bytes / 1e6, 1), unit: 'MB', target: null, pass: null },
    { name: 'peak RSS while generating', value: round(peakRss / 2 ** 20, 1), unit: 'MiB', target: null, pass: null },
  ];
}

async function ingest(): Promise<BenchResult[]> {
  const run = randomBytes(4).toString('hex');
  const topic = `bench.network-polls.${run}`;
  const database = `bench_network_${run}`;
  const kafka = createKafka({ brokers: BROKERS, clientId: `bench-network-${run}`, log: () => {} });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 6, replicationFactor: 1 }] });
  const env = loadEnv({ KAFKA_BROKERS: BROKERS, CLICKHOUSE_URL, LOG_LEVEL: 'warn' });
  const normalizer = await startNormalizer(env, { database, topic, groupId: `bench-network-${run}`, healthPort: null, laneRefreshCron: '0 0 1 1 *' });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const started = performance.now();
    let polls = 0;
    let journeys = 0;
    const inFlight: Promise<unknown>[] = [];
    let chunk: { key: string; value: string; headers: { mode: string } }[] = [];
    const send = async () => {
      if (!chunk.length) return;
      inFlight.push(producer.send({ topic, compression: CompressionTypes.None, messages: chunk }));
      chunk = [];
      if (inFlight.length >= 4) await inFlight.shift();
    };
    for await (const { polls: made } of history(INGEST_JOURNEYS, 2)) {
      journeys++;
      for (const poll of made) chunk.push({ key: pollKey(poll.carrier, poll.awb), value: JSON.stringify(poll), headers: { mode: 'test' } });
      polls += made.length;
      if (chunk.length >= 1_000) await send();
    }
    await send();
    await Promise.all(inFlight);
    const producedS = (performance.now() - started) / 1000;
    progress(`produced ${polls} polls of ${journeys} journeys in ${round(producedS, 1)} s`);
    // Shipments are written last in every flush: when all are in, so are polls and events.
    for (let last = -1; normalizer.writer.stats().inserted.carrier_polls < polls;) {
      const now = normalizer.writer.stats().inserted.carrier_polls;
      if (now !== last && now % 50_000 < 5_000) progress(`normalizer: ${now}/${polls} polls written`);
      last = now;
      await sleep(20);
    }
    while (normalizer.writer.stats().inserted.shipments < polls) await sleep(20);
    const endToEndS = (performance.now() - started) / 1000;
    const refreshStarted = performance.now();
    await normalizer.refreshLanes();
    const refreshS = (performance.now() - refreshStarted) / 1000;
    const result = await normalizer.clickhouse.query({ query: 'SELECT count() AS lanes, sum(sample_size) AS delivered FROM lane_stats FINAL', format: 'JSONEachRow' });
    const [row] = await result.json<{ lanes: string; delivered: string }>();
    return [
      { name: `ingest end to end (${INGEST_JOURNEYS.toLocaleString('en-US')} journeys, ${polls.toLocaleString('en-US')} polls)`, value: round(endToEndS, 1), unit: 's', target: null, pass: null },
      { name: 'ingest rate, Kafka → normalizer → ClickHouse', value: round(polls / endToEndS), unit: 'polls/s', target: null, pass: null },
      { name: `lane_stats refresh over the history (${Number(row?.lanes ?? 0).toLocaleString('en-US')} lanes)`, value: round(refreshS, 2), unit: 's', target: null, pass: null },
      { name: 'deliveries in lane_stats samples', value: Number(row?.delivered ?? 0), unit: 'shipments', target: null, pass: null },
    ];
  } finally {
    await producer.disconnect();
    await normalizer.stop();
    await admin.deleteTopics({ topics: [topic] }).catch((err: unknown) => progress(`could not delete ${topic}: ${(err as Error).message}`));
    await admin.disconnect();
    const client = createClickHouseClient({ url: CLICKHOUSE_URL });
    await client.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
    await client.close();
  }
}

export async function benchNetwork(): Promise<BenchResult[]> {
  const unknown = [...PARTS].filter((part) => !['fidelity', 'generate', 'ingest'].includes(part));
  if (unknown.length) throw new Error(`BENCH_NETWORK_PARTS: unknown part(s) ${unknown.join(', ')} (known: fidelity, generate, ingest)`);
  return [
    ...PARTS.has('fidelity') ? fidelity() : [],
    ...PARTS.has('generate') ? await generate() : [],
    ...PARTS.has('ingest') ? await ingest() : [],
  ];
}
