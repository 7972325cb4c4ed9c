/**
 * Failure tests of the distributed pipeline: they STOP shared services (ClickHouse, then Kafka) for
 * 30 s each, so they run alone, after every other test (scripts/test.sh runs `*.outage.test.ts` in
 * a second, sequential pass). Whatever a test stops is started again in `finally`, and once more in
 * afterAll, even when an assertion fails.
 *
 * The stack is the real one: the API in distributed mode (Redis, Kafka bus with its disk spool,
 * ClickHouse lane benchmarks), an in-process normalizer (consumer group → ClickHouse) and the sandbox.
 * Services are stopped and started with test/services of this checkout; the test first checks that
 * the addresses it uses are those services' and that they run (else stopping them would prove nothing).
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRecord, startApiHarness, type ApiHarness } from '../apps/api/testutil/harness.ts';
import { startNormalizer, type NormalizerApp } from '../apps/normalizer/start.ts';
import { pingClickHouse, sqlStringList } from '../lib/clickhouse/index.ts';
import { TEST_CLICKHOUSE_URL, createTestDatabase, rowsOf, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../lib/config/index.ts';
import type { KafkaBus } from '../lib/kafka/kafka-bus.ts';
import { readPollWindow } from '../lib/kafka/read-window.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import { POLLS_TOPIC, ensureTopics } from '../lib/kafka/topics.ts';
import type { CarrierPoll } from '../lib/schemas/index.ts';
import * as clickhouseService from './services/clickhouse.ts';
import * as kafkaService from './services/kafka.ts';
import { retried } from './support/retried.ts';

const OUTAGE_MS = 30_000;

type Service = 'clickhouse' | 'kafka';
const SERVICES = { clickhouse: clickhouseService, kafka: kafkaService };
/** Services this file stopped and has not started again yet. */
const down = new Set<Service>();

/** Stops or starts one of this checkout's services (async: the API and the normalizer keep running meanwhile). */
async function services(command: 'stop' | 'start', service: Service): Promise<number> {
  const started = performance.now();
  if (command === 'stop') {
    down.add(service);
    await SERVICES[service].stop();
  } else {
    await SERVICES[service].start();
    down.delete(service);
  }
  return performance.now() - started;
}

// ---------------------------------------------------------------------------------------------
const RUN = String(randomInt(0, 1_000_000)).padStart(6, '0');
let sequence = 0;
/** A delhivery sandbox number no other run uses: delivered (04) or in transit (02), lane 01. */
function uniqueAwb(): string {
  const n = sequence++;
  return `${RUN}${String(n).padStart(4, '0')}01${n % 2 ? '02' : '04'}`;
}

let db: TestDatabase;
let normalizer: NormalizerApp;
let api: ApiHarness;
let kafka: Kafka;
let key: string;
const groupId = `test-outage-${randomUUID()}`;
/** Every poll the API handed to its bus (a tap in front of KafkaBus.publish, which still runs). */
const published: CarrierPoll[] = [];

async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 90_000, everyMs = 500): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    let value: T | undefined;
    let failed = false;
    try {
      value = await probe();
    } catch (err) {
      // A service coming back may refuse a probe or two.
      if (Date.now() > deadline) throw err;
      failed = true;
    }
    if (!failed && (done(value as T) || Date.now() > deadline)) return value as T;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

const list = sqlStringList;

/** The API's /readyz: its HTTP status, overall status and the checks that fail. */
async function readiness(): Promise<{ code: number; status: string; failing: string[] }> {
  const res = await api.app.inject({ method: 'GET', url: '/readyz' });
  const body = res.json() as { status: string; checks: { name: string; ok: boolean }[] };
  return { code: res.statusCode, status: body.status, failing: body.checks.filter((c) => !c.ok).map((c) => c.name) };
}

/** Per table, plain count() and distinct keys over this file's shipments. */
async function storedCounts(awbs: readonly string[]) {
  const rows = await rowsOf<{ t: string; c: string; u: string }>(db.client, `
    SELECT 'carrier_polls' AS t, count() AS c, uniqExact(poll_id) AS u FROM carrier_polls WHERE awb IN ${list(awbs)}
    UNION ALL SELECT 'events' AS t, count() AS c, uniqExact(event_id) AS u FROM events WHERE awb IN ${list(awbs)}
    UNION ALL SELECT 'shipments' AS t, count() AS c, uniqExact(poll_id) AS u FROM shipments WHERE awb IN ${list(awbs)}`);
  return Object.fromEntries(rows.map((r) => [r.t, { count: Number(r.c), distinct: Number(r.u) }])) as Record<'carrier_polls' | 'events' | 'shipments', { count: number; distinct: number }>;
}

async function storedPollIds(): Promise<string[]> {
  const awbs = [...new Set(published.map((p) => p.awb))];
  const rows = await rowsOf<{ poll_id: string }>(db.client, `SELECT poll_id FROM carrier_polls WHERE awb IN ${list(awbs)}`);
  return rows.map((r) => r.poll_id);
}

/** One lookup with a fresh number, answered 200 from the sandbox. */
async function lookup(): Promise<void> {
  const awb = uniqueAwb();
  const record = expectRecord(await api.track(key, 'delhivery', awb));
  expect(record).toMatchObject({ carrier: 'delhivery', awb });
}

/** Lookups one after another (a short pause between them) for `ms`, and at least `min` of them. */
async function lookupsFor(ms: number, min = 20): Promise<number> {
  const until = Date.now() + ms;
  let count = 0;
  while (Date.now() < until || count < min) {
    await lookup();
    count++;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return count;
}

async function kafkaAnswers(): Promise<boolean> {
  const admin = testKafka().admin();
  try {
    await admin.connect();
    await admin.listTopics();
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** A normalizer of this file's consumer group, writing this file's database. */
function startPipelineNormalizer(): Promise<NormalizerApp> {
  return startNormalizer(
    loadEnv({ KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONFIG_DIR: DEFAULT_CONFIG_DIR, LOG_LEVEL: 'silent' }),
    { database: db.target.database, groupId, healthPort: null, laneRefreshCron: '0 0 1 1 *' },
  );
}

beforeAll(async () => {
  // The services this file will stop must be the ones it talks to, and running.
  expect({ KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL })
    .toEqual({ KAFKA_BROKERS: kafkaService.url(), CLICKHOUSE_URL: clickhouseService.url() });
  expect({ kafka: kafkaService.running(), clickhouse: clickhouseService.running() }).toEqual({ kafka: true, clickhouse: true });

  kafka = testKafka();
  db = await createTestDatabase();
  // The normalizer's group starts at the topic's end: it reads only what this file publishes (and
  // whatever else is published meanwhile).
  const admin = kafka.admin();
  await admin.connect();
  try {
    await retried(() => ensureTopics(admin));
    const ends = await retried(() => admin.fetchTopicOffsets(POLLS_TOPIC));
    await retried(() => admin.setOffsets({ groupId, topic: POLLS_TOPIC, partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })) }));
  } finally {
    await admin.disconnect();
  }
  normalizer = await startPipelineNormalizer();
  api = await startApiHarness({
    store: 'redis',
    env: { KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL },
    clickhouseDatabase: db.target.database,
  });
  const bus = api.runtime.bus;
  const publish = bus.publish.bind(bus);
  bus.publish = (poll, mode) => {
    published.push(poll);
    publish(poll, mode);
  };
  key = (await api.createKey({ plan: 'business', mode: 'test', burst_per_second: 10_000, daily_quota: 10_000 })).key;
}, 120_000);

afterAll(async () => {
  // Whatever happened above, the shared services run again before anything else.
  for (const service of [...down]) await services('start', service);
  await api?.close();
  await normalizer?.stop().catch(() => undefined); // may be the one stopped during the outage
  await db?.drop();
}, 180_000);

describe('pipeline outages (real services stopped for 30 s)', () => {
  it('loses no poll while ClickHouse is down, even across a normalizer restart: every poll is in carrier_polls once it is back, without duplicates', async () => {
    // Before: the pipeline works.
    for (let i = 0; i < 5; i++) await lookup();
    await api.runtime.bus.flush();
    const early = published.map((p) => p.poll_id);
    expect(await eventually(storedPollIds, (ids) => early.every((id) => ids.includes(id)))).toEqual(expect.arrayContaining(early));

    let during: number;
    try {
      await services('stop', 'clickhouse');
      expect(await pingClickHouse(db.client)).toBe(false);
      // Readiness tells the truth: degraded (still 200, it answers), naming ClickHouse.
      expect(await readiness()).toEqual({ code: 200, status: 'degraded', failing: ['clickhouse'] });
      // Lookups keep being answered (a lane benchmark is an enrichment), polls keep flowing to Kafka;
      // the normalizer's writes fail, its rows wait in the writer's memory and nothing is committed.
      during = await lookupsFor(OUTAGE_MS / 2);
      // Half way the normalizer goes away (a crash or a deploy): what its writer held in memory is
      // gone, so only uncommitted offsets can bring those polls back. Lookups go on meanwhile.
      const stopping = normalizer.stop().then(() => null, (err: unknown) => err);
      during += await lookupsFor(OUTAGE_MS / 2);
      await stopping;
      await api.runtime.bus.flush();
      expect(await pingClickHouse(db.client)).toBe(false);
    } finally {
      await services('start', 'clickhouse');
    }
    expect(published).toHaveLength(early.length + during);
    expect(await eventually(readiness, (r) => r.status === 'ready')).toEqual({ code: 200, status: 'ready', failing: [] });
    // A new normalizer of the same group takes over from the last committed offsets.
    normalizer = await startPipelineNormalizer();

    const all = published.map((p) => p.poll_id);
    const stored = await eventually(storedPollIds, (ids) => all.every((id) => ids.includes(id)), 120_000);
    expect(all.filter((id) => !stored.includes(id))).toEqual([]);
    const awbs = published.map((p) => p.awb);
    const counts = await storedCounts(awbs);
    expect(counts.carrier_polls).toEqual({ count: all.length, distinct: all.length });
    expect(counts.events.count).toBe(counts.events.distinct);
    // Every lookup here found its shipment: one shipments row per poll once the last flush is in.
    const final = await eventually(() => storedCounts(awbs), (c) => c.shipments.count >= all.length, 60_000);
    expect(final.shipments).toEqual({ count: all.length, distinct: all.length });
    expect(final.events.count).toBe(final.events.distinct);
    expect(normalizer.consumer.isHealthy()).toBe(true);
  }, 240_000);

  it('keeps answering while Kafka is down and loses no poll: every poll reaches the topic and ClickHouse once it is back', async () => {
    const before = published.length;
    let during: number;
    const outageStartedMs = Date.now();
    try {
      await services('stop', 'kafka');
      expect(await kafkaAnswers()).toBe(false);
      during = await lookupsFor(OUTAGE_MS);
      expect(await kafkaAnswers()).toBe(false);
      // The polls wait in the bus's disk spool (under DATA_DIR) meanwhile, and readiness says so.
      expect((api.runtime.bus as KafkaBus).spooled).toBe(true);
      expect(await readiness()).toEqual({ code: 200, status: 'degraded', failing: ['kafka'] });
    } finally {
      await services('start', 'kafka');
    }
    // Every lookup was answered 200 (lookup() asserts it) and made one poll, spooled meanwhile.
    expect(published).toHaveLength(before + during);

    // The bus publishes its spool once the broker is back (flush resolves when all of it is on Kafka).
    const flushed = await Promise.race([
      api.runtime.bus.flush().then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 90_000).unref()),
    ]);
    expect(flushed).toBe(true);

    expect(await eventually(readiness, (r) => r.status === 'ready')).toEqual({ code: 200, status: 'ready', failing: [] });

    const mine = published.slice(before);
    const wanted = new Set(mine.map((p) => p.poll_id));
    // On the topic: every poll, exactly once (transactions with the spool's position, read committed).
    const seen: string[] = [];
    await readPollWindow(testKafka(), { sinceMs: outageStartedMs - 60_000 }, (value) => {
      const id = (JSON.parse(value) as { poll_id?: string }).poll_id;
      if (id && wanted.has(id)) seen.push(id);
    });
    expect([...wanted].filter((id) => !seen.includes(id))).toEqual([]);
    expect(seen).toHaveLength(wanted.size);

    // In ClickHouse: the normalizer reconnected and stored every poll of the file, once.
    const all = published.map((p) => p.poll_id);
    const stored = await eventually(storedPollIds, (ids) => all.every((id) => ids.includes(id)), 120_000);
    expect(all.filter((id) => !stored.includes(id))).toEqual([]);
    const awbs = published.map((p) => p.awb);
    const final = await eventually(() => storedCounts(awbs), (c) => c.shipments.count >= all.length, 60_000);
    expect(final).toEqual({
      carrier_polls: { count: all.length, distinct: all.length },
      events: { count: final.events.distinct, distinct: final.events.distinct },
      shipments: { count: all.length, distinct: all.length },
    });
  }, 240_000);
});
