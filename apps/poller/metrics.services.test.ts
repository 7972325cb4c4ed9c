/**
 * The poller app's /metrics against the real Redis and ClickHouse and the sandbox carriers: a Redis
 * namespace and a database of this file's own. Watched shipments make the candidates: some due,
 * one polled a moment ago (not due), one terminal (not a candidate); each tick polls the due ones
 * once. Exact figures: polls by carrier and outcome (found, not found, a malformed answer as an
 * error), ticks by outcome, due shipments at the last tick; a tick that cannot read ClickHouse
 * counts as failed and leaves the due gauge alone. Ticks run through tick() only (no schedule).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestKeyPrefix, deleteUnder, testRedisUrl } from '../../lib/access/testutil/stores.ts';
import { TEST_CLICKHOUSE_URL, createTestDatabase, type TestDatabase } from '../../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv, type Env } from '../../lib/config/index.ts';
import { TEST_BROKERS } from '../../lib/kafka/testutil/broker.ts';
import { metricValue } from '../../lib/metrics/testutil/metric-value.ts';
import { startSandbox, type RunningSandbox } from '../../lib/sandbox/server.ts';
import { RedisKv } from '../../lib/kv/index.ts';
import { WatchStore } from '../../lib/push/index.ts';
import { startPoller, type PollerApp } from './start.ts';
import { MINUTE_MS as MINUTE } from '../../lib/time/index.ts';
import { requireAwb } from '../../lib/schemas/index.ts';

const RUN = randomUUID().slice(0, 8);
const namespace = `test:${RUN}:`;
const dataDir = mkdtempSync(join(tmpdir(), 'poller-metrics-'));
let db: TestDatabase;
let redis: Redis;
let sandbox: RunningSandbox;
let env: Env;
const apps: PollerApp[] = [];

/** The sandbox picks the scenario from the last two digits (00 not found, 02 in transit, 04 delivered, 19 malformed). */
const WATCHED = [
  { carrier: 'delhivery', awb: '1234567890102', polledAgoMs: 10 * MINUTE, terminal: false }, // found
  { carrier: 'delhivery', awb: '1234567891102', polledAgoMs: 20 * MINUTE, terminal: false }, // found
  { carrier: 'delhivery', awb: '1234567890100', polledAgoMs: 10 * MINUTE, terminal: false }, // not found
  { carrier: 'bluedart', awb: '12345670102', polledAgoMs: 10 * MINUTE, terminal: false }, // found
  { carrier: 'bluedart', awb: '12345670119', polledAgoMs: 10 * MINUTE, terminal: false }, // malformed answer: error
  { carrier: 'delhivery', awb: '1234567892102', polledAgoMs: 0, terminal: false }, // polled just now: not due
  { carrier: 'delhivery', awb: '1234567890104', polledAgoMs: 10 * MINUTE, terminal: true }, // delivered: not a candidate
];

beforeAll(async () => {
  db = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  redis = new Redis(await testRedisUrl());
  const watches = new WatchStore(new RedisKv(redis, `${namespace}push:`));
  const now = Date.now();
  const keyPrefix = await createTestKeyPrefix(redis, `${namespace}access:`);
  for (const w of WATCHED) {
    await watches.create({ keyPrefix, mode: 'test', carrier: w.carrier, awb: requireAwb(w.awb), record: null, polledMs: now - w.polledAgoMs, terminal: w.terminal, nowMs: now });
  }
  env = loadEnv({ REDIS_URL: await testRedisUrl(), KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONFIG_DIR: DEFAULT_CONFIG_DIR, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
}, 120_000);

afterAll(async () => {
  for (const app of apps) await app.stop();
  await sandbox?.close();
  if (redis) {
    await deleteUnder(redis, namespace);
    redis.disconnect();
  }
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

async function poller(database: string): Promise<PollerApp> {
  // Due after 5 minutes without a poll; one tick takes every due shipment (tick as long as the interval).
  const app = await startPoller(env, {
    database, redisNamespace: namespace, notices: false, sandboxUrl: sandbox.url, healthPort: null, tickCron: null,
    policy: { intervalMs: 5 * MINUTE, tickMs: 5 * MINUTE, lookbackMs: 30 * 86_400_000 },
  });
  apps.push(app);
  return app;
}

async function metricsOf(app: PollerApp): Promise<string> {
  const res = await app.health.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return res.body;
}

it('polls by carrier and outcome, ticks and due shipments, exactly', async () => {
  const app = await poller(db.target.database);
  const before = await metricsOf(app);
  expect(metricValue(before, 'poller_polls_total')).toBe(0);
  expect(metricValue(before, 'poller_ticks_total')).toBe(0);
  expect(metricValue(before, 'poller_due_shipments')).toBe(0);

  expect(await app.tick()).toEqual({ polled: 5, found: 3, notFound: 1, errors: 1 });
  // Nothing records a poll time here (that is the normalizer's push detection), so the same five are due again.
  expect(await app.tick()).toEqual({ polled: 5, found: 3, notFound: 1, errors: 1 });

  const text = await metricsOf(app);
  const series = (carrier: string, outcome: string) => metricValue(text, 'poller_polls_total', { carrier, outcome });
  expect({
    delhiveryFound: series('delhivery', 'found'), delhiveryNotFound: series('delhivery', 'not_found'), delhiveryError: series('delhivery', 'error'),
    bluedartFound: series('bluedart', 'found'), bluedartNotFound: series('bluedart', 'not_found'), bluedartError: series('bluedart', 'error'),
  }).toEqual({ delhiveryFound: 4, delhiveryNotFound: 2, delhiveryError: 0, bluedartFound: 2, bluedartNotFound: 0, bluedartError: 2 });
  expect(metricValue(text, 'poller_polls_total')).toBe(10);
  expect(metricValue(text, 'poller_ticks_total', { outcome: 'ok' })).toBe(2);
  expect(metricValue(text, 'poller_ticks_total', { outcome: 'failed' })).toBe(0);
  expect(metricValue(text, 'poller_due_shipments')).toBe(5);
  // Carrier poll latency is observed once per poll made.
  expect(metricValue(text, 'tracking_carrier_poll_seconds_count')).toBe(10);
  expect(metricValue(text, 'tracking_carrier_errors_total', { carrier: 'bluedart' })).toBe(2);
}, 120_000);

it('a tick that cannot read ClickHouse counts as failed and polls nothing', async () => {
  const app = await poller(`missing_${RUN}`);
  await expect(app.tick()).rejects.toThrow();
  const text = await metricsOf(app);
  expect(metricValue(text, 'poller_ticks_total', { outcome: 'failed' })).toBe(1);
  expect(metricValue(text, 'poller_ticks_total', { outcome: 'ok' })).toBe(0);
  expect(metricValue(text, 'poller_polls_total')).toBe(0);
  expect(metricValue(text, 'poller_due_shipments')).toBe(0);
}, 60_000);
