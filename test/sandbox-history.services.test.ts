/**
 * `npm run cli -- sandbox history --into-stores` on the services' Kafka: the normalizer fills
 * ClickHouse's events, shipments and (after a lane refresh) lane_stats from the generated history,
 * for test mode only (lane keys `test:…`).
 *
 * Isolation: a ClickHouse database, a Kafka topic and a consumer group of this file's own, and a
 * random history seed (so AWBs no other run uses).
 */
import { execFile } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNormalizer, type NormalizerApp } from '../apps/normalizer/start.ts';
import { sqlStringList } from '../lib/clickhouse/index.ts';
import { TEST_CLICKHOUSE_URL, createTestDatabase, rowsOf, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../lib/config/index.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import { retried } from './support/retried.ts';

const ROOT = resolve(import.meta.dirname, '..');
const NODE = process.execPath; // node runs the TypeScript itself
const SEED = randomInt(1_000, 1_000_000);
const SHIPMENTS = 1500;

let kafka: Kafka;
let db: TestDatabase;
let normalizer: NormalizerApp;
let dataDir: string;
const groupId = `test-history-${randomUUID()}`;
const topic = `test-history-${randomUUID()}`;

async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 120_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 500));
  }
}

beforeAll(async () => {
  kafka = testKafka();
  db = await createTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'history-services-'));
  const admin = kafka.admin();
  await admin.connect();
  try {
    // A topic of this file's own: its history on the shared topic reached the lanes of other
    // files' normalizers (pipeline.services' lane benchmark) when the two ran at once.
    await retried(() => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] }));
  } finally {
    await admin.disconnect();
  }
  const env = loadEnv({ KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONFIG_DIR: DEFAULT_CONFIG_DIR, LOG_LEVEL: 'error' });
  normalizer = await startNormalizer(env, { database: db.target.database, topic, groupId, healthPort: null, laneRefreshCron: '0 0 1 1 *' });
}, 120_000);

afterAll(async () => {
  await normalizer?.stop();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('sandbox history --into-stores (Kafka → normalizer → ClickHouse)', () => {
  it('fills events, shipments and lane_stats of test mode', { timeout: 300_000 }, async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, KAFKA_BROKERS: TEST_BROKERS, DATA_DIR: dataDir };
    delete env.CLICKHOUSE_URL;
    delete env.REDIS_URL;
    const { stderr } = await promisify(execFile)(NODE, ['apps/cli/main.ts', 'sandbox', 'history', '--shipments', String(SHIPMENTS), '--days', '60', '--seed', String(SEED), '--into-stores', '--topic', topic, '--out', join(dataDir, 'h.jsonl')], { cwd: ROOT, env, encoding: 'utf8' });
    const polls = Number(/(\d+) polls → /.exec(stderr)?.[1]);
    expect(polls, stderr).toBeGreaterThan(SHIPMENTS * 2);
    // Only this run's numbers: other files' polls on the shared topic reach this database too.
    const awbs = [...new Set(readFileSync(join(dataDir, 'h.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { awb: string }).awb))];
    const mine = `awb IN ${sqlStringList(awbs)}`;

    const counts = () => rowsOf<{ polls: string; shipments: string }>(db.client,
      `SELECT (SELECT count() FROM carrier_polls WHERE ${mine}) AS polls, (SELECT uniqExact(carrier, awb) FROM shipments WHERE ${mine}) AS shipments`);
    // The writer flushes each table on its own schedule: wait for both.
    const seen = await eventually(counts, (c) => Number(c[0]!.polls) >= polls && Number(c[0]!.shipments) >= awbs.length * 0.99);
    expect(Number(seen[0]!.polls)).toBeGreaterThanOrEqual(polls);
    expect(Number(seen[0]!.shipments)).toBeGreaterThanOrEqual(awbs.length * 0.99);

    const events = await rowsOf<{ carriers: string; unknown: string; n: string }>(db.client,
      `SELECT uniqExact(carrier) AS carriers, countIf(code = 'unknown') AS unknown, count() AS n FROM events WHERE ${mine}`);
    expect(Number(events[0]!.carriers)).toBe(11);
    expect(Number(events[0]!.unknown)).toBe(0);
    expect(Number(events[0]!.n)).toBeGreaterThan(SHIPMENTS * 5);

    const delivered = await rowsOf<{ n: string }>(db.client, `SELECT count() AS n FROM shipments FINAL WHERE stage = 'delivered' AND transit_days > 0 AND ${mine}`);
    expect(Number(delivered[0]!.n)).toBeGreaterThan(SHIPMENTS * 0.6);

    // The lanes are computed from lane_closures, which the writer flushes on a schedule of its own:
    // refreshing before it holds this run's closures computed a handful of lanes.
    const closures = () => rowsOf<{ n: string }>(db.client, `SELECT uniqExact(carrier, awb) AS n FROM lane_closures WHERE ${mine}`);
    const closed = await eventually(closures, (c) => Number(c[0]!.n) >= Number(delivered[0]!.n));
    expect(Number(closed[0]!.n)).toBeGreaterThanOrEqual(Number(delivered[0]!.n));
    await normalizer.refreshLanes();
    const lanes = await rowsOf<{ lane: string; mode: string; sample_size: string; p50: number | null }>(db.client,
      "SELECT lane, mode, sample_size, p50_transit_days AS p50 FROM lane_stats WHERE lane LIKE '%:400:700' ORDER BY lane");
    expect(lanes.length).toBeGreaterThan(3);
    expect(lanes.every((l) => l.lane.startsWith('test:') && l.mode === 'test')).toBe(true);
    expect(lanes.some((l) => Number(l.sample_size) > 0 && l.p50 !== null)).toBe(true);
  });
});
