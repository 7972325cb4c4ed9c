/**
 * The normalizer app's /metrics against the real Kafka and ClickHouse (npm run services -- up): a
 * topic, consumer group and database of this file's own. Polls in → rows written per table, the
 * invalid one counted in the DLQ, the same polls again → duplicates skipped, lag per partition and
 * flush times present.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CLICKHOUSE_URL, countOf, createTestDatabase, type TestDatabase } from '../../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../../lib/config/index.ts';
import { TEST_BROKERS, testKafka } from '../../lib/kafka/testutil/broker.ts';
import { pollKey } from '../../lib/kafka/topics.ts';
import { journeyPoll } from '../../lib/testutil/polls.ts';
import { metricValue } from '../../lib/metrics/testutil/metric-value.ts';
import { startNormalizer, type NormalizerApp } from './start.ts';

const topic = `test-polls-${randomUUID()}`;
const POLLS = 40;
let db: TestDatabase;
let kafka: Kafka;
let producer: Producer;
let app: NormalizerApp;

const polls = Array.from({ length: POLLS }, (_, i) => ({ ...journeyPoll('delhivery', i), awb: `MT${randomUUID().slice(0, 8)}${i}` }));

async function produce(values: { key: string; value: string }[]): Promise<void> {
  await producer.send({ topic, messages: values.map((m) => ({ ...m, headers: { mode: 'test' } })) });
}

async function metricsText(): Promise<string> {
  const res = await app.health.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return res.body;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  kafka = testKafka();
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
  await admin.disconnect();
  producer = kafka.producer();
  await producer.connect();
  const env = loadEnv({ KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONFIG_DIR: DEFAULT_CONFIG_DIR, LOG_LEVEL: 'error' });
  app = await startNormalizer(env, { database: db.target.database, topic, groupId: `test-metrics-${randomUUID()}`, healthPort: null, laneRefreshCron: '0 0 1 1 *' });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await producer?.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  await db?.drop();
});

describe('normalizer /metrics', () => {
  it('counts rows per table, dead letters, duplicates skipped, lag per partition and flush times', async () => {
    await produce([...polls.map((p) => ({ key: pollKey(p.carrier, p.awb), value: JSON.stringify(p) })), { key: 'x:y', value: '{"not":"a poll"}' }]);
    await until(async () => (await countOf(db.client, 'SELECT count() AS c FROM carrier_polls')) === POLLS, 'the first rows');
    await until(async () => metricValue(await metricsText(), 'normalizer_dlq_messages_total') === 1, 'the dead letter');
    // The rows are in ClickHouse a moment before the flush's report reaches the metrics.
    await until(async () => metricValue(await metricsText(), 'normalizer_rows_written_total', { table: 'shipments' }) === POLLS, 'the flush reported');
    let text = await metricsText();
    const events = await countOf(db.client, 'SELECT count() AS c FROM events');
    expect(metricValue(text, 'normalizer_rows_written_total', { table: 'carrier_polls' })).toBe(POLLS);
    expect(metricValue(text, 'normalizer_rows_written_total', { table: 'shipments' })).toBe(POLLS);
    expect(metricValue(text, 'normalizer_rows_written_total', { table: 'events' })).toBe(events);
    expect(metricValue(text, 'normalizer_polls_consumed_total')).toBe(POLLS + 1);
    expect(metricValue(text, 'normalizer_duplicates_skipped_total')).toBe(0);
    expect(metricValue(text, 'normalizer_flush_seconds_count')).toBeGreaterThan(0);
    // One lag series per partition that had a batch; each partition was read to its end.
    const lags = text.split('\n').filter((line) => line.startsWith(`normalizer_consumer_lag{topic="${topic}"`));
    expect(lags.length).toBeGreaterThan(0);
    expect(lags.every((line) => line.endsWith(' 0'))).toBe(true);

    // The same polls again (as a re-delivery would bring them): nothing new stored, all counted as skipped.
    await produce(polls.map((p) => ({ key: pollKey(p.carrier, p.awb), value: JSON.stringify(p) })));
    await until(async () => metricValue(await metricsText(), 'normalizer_duplicates_skipped_total', { table: 'carrier_polls' }) === POLLS, 'the duplicates');
    text = await metricsText();
    expect(metricValue(text, 'normalizer_rows_written_total', { table: 'carrier_polls' })).toBe(POLLS);
    expect(await countOf(db.client, 'SELECT count() AS c FROM carrier_polls')).toBe(POLLS);
    expect(metricValue(text, 'normalizer_write_retries_total')).toBe(0);
    expect(metricValue(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('serves /healthz and /readyz, which checks Kafka, ClickHouse, its consumer and its writer', async () => {
    expect((await app.health.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const ready = await app.health.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    const body = ready.json() as { status: string; checks: { name: string; ok: boolean }[] };
    expect(body.status).toBe('ready');
    expect(body.checks.map((c) => c.name).sort()).toEqual(['clickhouse', 'consumer', 'kafka', 'writer']);
    expect(body.checks.every((c) => c.ok)).toBe(true);
  });
});
