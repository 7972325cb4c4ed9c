/**
 * Several normalizers in one consumer group, against the real Kafka and ClickHouse (npm run
 * services -- up): a topic, group and database of this file's own. Polls are produced all along;
 * a second normalizer joins mid-stream (the partitions rebalance), then the first is killed with
 * SIGKILL in the middle of its work (its uncommitted batches go to the survivor). Every poll
 * produced is in ClickHouse exactly once: no loss, no duplicate row in carrier_polls, events or
 * shipments. Each normalizer is a child process running under the shared process runner.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka, Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TEST_CLICKHOUSE_URL, countOf, createTestDatabase, rowsOf, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR } from '../lib/config/index.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import { pollKey } from '../lib/kafka/topics.ts';
import { startChildApp, type ChildApp } from '../lib/testutil/child-app.ts';
import { journeyPoll } from '../lib/testutil/polls.ts';

const RUN = randomUUID().slice(0, 8);
const topic = `test-polls-${RUN}`;
const groupId = `test-normalizers-${RUN}`;
const BATCH = 50;
let db: TestDatabase;
let kafka: Kafka;
let producer: Producer;
const children: ChildApp[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  kafka = testKafka();
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 6, replicationFactor: 1 }] });
  await admin.disconnect();
  producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await producer?.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.deleteGroups([groupId]).catch(() => undefined);
  await admin.disconnect();
  await db?.drop();
});

function normalizer(): Promise<ChildApp> {
  return startChildApp('test/app-child.ts', { app: 'normalizer', database: db.target.database, topic, groupId, laneRefreshCron: '0 0 1 1 *' }, {
    KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONFIG_DIR: DEFAULT_CONFIG_DIR,
  }).then((c) => { children.push(c); return c; });
}

const stored = () => countOf(db.client, 'SELECT count() AS c FROM carrier_polls');

async function until(check: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('a second normalizer joins mid-stream, then the first is killed with SIGKILL: every poll stored exactly once', async () => {
  // Production runs all along, a batch of unique polls at a time, until told to stop, up to a
  // target each step raises: unbounded, a slow rebalance on a loaded machine let it make 100,000
  // polls, more than the normalizer could store within the wait.
  let produced = 0;
  let target = 2_000;
  let producing = true;
  const production = (async () => {
    while (producing) {
      if (produced >= target) { await new Promise((resolve) => setTimeout(resolve, 50)); continue; }
      const polls = Array.from({ length: BATCH }, (_, i) => ({ ...journeyPoll('delhivery', produced + i), awb: `NG${RUN}${produced + i}` }));
      await producer.send({ topic, messages: polls.map((p) => ({ key: pollKey(p.carrier, p.awb), value: JSON.stringify(p), headers: { mode: 'test' } })) });
      produced += BATCH;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    const first = await normalizer();
    await until(async () => (await stored()) >= 500, 'the first normalizer writing');
    const second = await normalizer();
    // Both share the partitions once the rebalance is done, and keep writing.
    const beforeKill = await stored();
    target = produced + 3_000;
    await until(async () => (await stored()) >= beforeKill + 1_500, 'writing after the second joined');
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const afterKill = produced;
    target = afterKill + 1_000;
    await until(async () => produced >= afterKill + 1_000, 'more polls after the kill');
    producing = false;
    await production;
    await until(async () => (await stored()) >= produced, `all ${produced} polls stored`);
    // A little longer: a late duplicate would show up now.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
  } finally {
    producing = false;
    await production;
  }

  const [polls] = await rowsOf<{ rows: string; ids: string }>(db.client, 'SELECT count() AS rows, uniqExact(poll_id) AS ids FROM carrier_polls');
  expect({ rows: Number(polls!.rows), ids: Number(polls!.ids) }).toEqual({ rows: produced, ids: produced });
  const [shipments] = await rowsOf<{ rows: string; ids: string }>(db.client, 'SELECT count() AS rows, uniqExact(poll_id) AS ids FROM shipments');
  expect({ rows: Number(shipments!.rows), ids: Number(shipments!.ids) }).toEqual({ rows: produced, ids: produced });
  const [events] = await rowsOf<{ rows: string; ids: string }>(db.client, 'SELECT count() AS rows, uniqExact(event_id, mapping_version) AS ids FROM events');
  expect(Number(events!.rows)).toBe(Number(events!.ids));
  expect(Number(events!.rows)).toBeGreaterThanOrEqual(produced);
}, 300_000);
