/**
 * Two normalizers in one consumer group with push on (REDIS_URL set: each runs change detection in
 * a consumer group of its own), against the real Kafka, ClickHouse and Redis: a poll topic,
 * consumer groups, a database and a Redis namespace of this file's own. One API key (its push
 * state written straight into the namespace) watches shipments and has one endpoint, a verifying
 * receiver (lib/push/testutil/receiver.ts) served by a dispatcher of this file's own.
 *
 * Every poll of a watched shipment adds one scan, so every poll is one change. Polls arrive in
 * rounds while a second normalizer joins (the partitions rebalance) and the first is SIGKILLed
 * (its unfinished polls go to the survivor). Then: each watch's sequence is the number of polls,
 * its outbox empty; on tracking.webhook-events.v1 each shipment has exactly one event per sequence
 * 1..N (a copy of one event may appear twice, same id and bytes: a crash between handing an
 * outbox over and clearing it); the receiver got every event, in sequence order per shipment.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDispatcher, type DispatcherApp } from '../apps/dispatcher/start.ts';
import { createTestKeyPrefix, deleteUnder, testRedisUrl } from '../lib/access/testutil/stores.ts';
import { TEST_CLICKHOUSE_URL, createTestDatabase, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../lib/config/index.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import { pollKey } from '../lib/kafka/topics.ts';
import { startChildApp, type ChildApp } from '../lib/testutil/child-app.ts';
import { makePoll, scan } from '../lib/testutil/polls.ts';
import { RedisKv } from '../lib/kv/index.ts';
import {
  EndpointStore, WEBHOOK_EVENTS_TOPIC, WatchStore, ensureWebhookTopic, pushKeys, type WatchDoc, type WebhookEvent,
} from '../lib/push/index.ts';
import { startReceiver, type Receiver } from '../lib/push/testutil/receiver.ts';
import type { CarrierPoll } from '../lib/schemas/index.ts';
import { HOUR_MS as HOUR } from '../lib/time/index.ts';
import { LOOPBACK_TARGETS } from '../lib/push/testutil/receiver.ts';
import { requireAwb } from '../lib/schemas/index.ts';

const RUN = randomUUID().slice(0, 8);
const topic = `test-polls-${RUN}`;
const groupId = `test-normalizers-${RUN}`;
const pushGroupId = `test-push-detector-${RUN}`;
const namespace = `test:${RUN}:`;
/** A real key of the access store beside the watches: the detector asks its standing. */
let prefix: string;
const SHIPMENTS = 30;
/** Polls per shipment: a scan more each time (manifested, 22 hub scans, delivered). */
const POLLS = 24;
const BASE_MS = Math.floor(Date.now() / HOUR) * HOUR - 2 * 86_400_000;
const awbs = Array.from({ length: SHIPMENTS }, (_, i) => `NP${RUN.toUpperCase()}${String(i).padStart(3, '0')}`);
const dataDir = mkdtempSync(join(tmpdir(), 'normalizers-push-'));

let db: TestDatabase;
let kafka: Kafka;
let producer: Producer;
let redis: Redis;
let kv: RedisKv;
let receiver: Receiver;
let dispatcher: DispatcherApp | undefined;
let eventsConsumer: Consumer | undefined;
const seen: WebhookEvent[] = [];
const children: ChildApp[] = [];

/** The k-th poll (1..POLLS) of a shipment: scans 1..k, an hour apart, polled half an hour after the last. */
function pollOf(awb: string, k: number): CarrierPoll {
  const scans = Array.from({ length: k }, (_, i) => scan({
    // IST wall time without offset, as Delhivery writes it.
    occurred_at: new Date(BASE_MS + i * HOUR + 5.5 * HOUR).toISOString().slice(0, 19),
    raw_status: i === 0 ? 'Manifested' : i === POLLS - 1 ? 'Delivered' : 'In Transit',
    raw_code: i === POLLS - 1 ? 'DL' : 'UD',
    remarks: i === 0 ? 'Consignment Manifested' : i === POLLS - 1 ? 'Delivered' : 'Shipment forwarded',
    location: `Hub ${i}`,
  }));
  return makePoll({ poll_id: randomUUID(), carrier: 'delhivery', awb, polled_at: new Date(BASE_MS + (k - 1) * HOUR + HOUR / 2).toISOString(), scans: scans.reverse() });
}

async function produceRound(k: number): Promise<void> {
  await producer.send({ topic, messages: awbs.map((awb) => ({ key: pollKey('delhivery', awb), value: JSON.stringify(pollOf(awb, k)), headers: { mode: 'test' } })) });
}

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const watchDocs = () => kv.getMany<WatchDoc>(awbs.map((awb) => pushKeys.watch(prefix, 'delhivery', awb)));
/** Polls whose change detection is done: the lowest sequence any watch has reached. */
const detectedRounds = async () => Math.min(...(await watchDocs()).map((d) => d?.sequence ?? 0));

beforeAll(async () => {
  db = await createTestDatabase();
  kafka = testKafka();
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 6, replicationFactor: 1 }] });
  await admin.disconnect();
  await ensureWebhookTopic(kafka);
  producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  redis = new Redis(await testRedisUrl());
  kv = new RedisKv(redis, `${namespace}push:`);
  prefix = await createTestKeyPrefix(redis, `${namespace}access:`);

  // The key's endpoint and watches, as POST /v1/webhooks and POST /v1/trackings leave them (no scans yet).
  receiver = await startReceiver();
  const now = Date.now();
  const { secret } = await new EndpointStore(kv, Date.now, { allowedTargets: LOOPBACK_TARGETS }).create(prefix, 'test', { url: receiver.url }, now);
  receiver.setSecrets([secret]);
  const watches = new WatchStore(kv);
  for (const awb of awbs) {
    await watches.create({ keyPrefix: prefix, mode: 'test', carrier: 'delhivery', awb: requireAwb(awb), record: null, polledMs: BASE_MS - HOUR, terminal: false, nowMs: now });
  }

  // Every event of this key on the shared events topic, read from the topic's end as it is now.
  const offsets = await (async () => {
    const a = kafka.admin();
    await a.connect();
    try { return await a.fetchTopicOffsets(WEBHOOK_EVENTS_TOPIC); } finally { await a.disconnect(); }
  })();
  eventsConsumer = kafka.consumer({ groupId: `test-events-${RUN}` });
  await eventsConsumer.connect();
  await eventsConsumer.subscribe({ topic: WEBHOOK_EVENTS_TOPIC });
  await eventsConsumer.run({
    eachMessage: async ({ message }) => {
      const event = JSON.parse(message.value?.toString() ?? 'null') as WebhookEvent | null;
      if (event?.key_prefix === prefix) seen.push(event);
    },
  });
  for (const { partition, offset } of offsets) eventsConsumer.seek({ topic: WEBHOOK_EVENTS_TOPIC, partition, offset });

  const env = loadEnv({ REDIS_URL: await testRedisUrl(), KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONFIG_DIR: DEFAULT_CONFIG_DIR, DATA_DIR: dataDir, LOG_LEVEL: 'silent', WEBHOOK_ALLOWED_TARGETS: '127.0.0.1/32' });
  dispatcher = await startDispatcher(env, { database: db.target.database, redisNamespace: namespace, groupId: `test-dispatcher-${RUN}`, fromLatest: true, healthPort: null });
}, 120_000);

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await dispatcher?.stop();
  await eventsConsumer?.disconnect();
  await producer?.disconnect();
  await receiver?.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.deleteGroups([groupId, pushGroupId, `test-dispatcher-${RUN}`, `test-events-${RUN}`]).catch(() => undefined);
  await admin.disconnect();
  if (redis) {
    await deleteUnder(redis, namespace);
    redis.disconnect();
  }
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

async function normalizer(): Promise<ChildApp> {
  const c = await startChildApp('test/app-child.ts', { app: 'normalizer', database: db.target.database, topic, groupId, pushGroupId, redisNamespace: namespace, laneRefreshCron: '0 0 1 1 *' }, {
    KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, REDIS_URL: await testRedisUrl(), CONFIG_DIR: DEFAULT_CONFIG_DIR,
  });
  children.push(c);
  return c;
}

it('a second normalizer joins, the first is SIGKILLed while polls change watched shipments: one event per change, sequences without gaps or repeats', async () => {
  const pause = () => new Promise((resolve) => setTimeout(resolve, 150));
  const first = await normalizer();
  let k = 0;
  // Rounds 1-6 with the first alone; its detection is under way before the second joins.
  while (k < 6) { await produceRound(++k); await pause(); }
  await until(async () => (await detectedRounds()) >= 2, 'the first normalizer detecting changes');
  const second = await normalizer();
  // Rounds 7-14 while the group rebalances, then the first is killed in the middle of its work.
  while (k < 14) { await produceRound(++k); await pause(); }
  first.child.kill('SIGKILL');
  expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
  while (k < POLLS) { await produceRound(++k); await pause(); }

  // The survivor takes the dead member's partitions once its session ends, and catches up.
  await until(async () => (await detectedRounds()) >= POLLS, `every watch at sequence ${POLLS}`, 180_000);
  await until(async () => (await watchDocs()).every((d) => d!.outbox.length === 0), 'every outbox handed over');
  const expected = SHIPMENTS * POLLS;
  await until(() => new Set(seen.map((e) => e.id)).size >= expected, `${expected} events on the events topic`);
  await receiver.waitFor((r) => new Set(r.accepted().map((d) => d.id)).size >= expected, 120_000);
  // A little longer: a late extra event or delivery would show up now.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  second.child.kill('SIGTERM');
  expect(await second.exited, second.stderr()).toEqual({ code: 0, signal: null });

  // The push state: every change counted once.
  for (const doc of await watchDocs()) expect({ sequence: doc!.sequence, outbox: doc!.outbox.length }).toEqual({ sequence: POLLS, outbox: 0 });

  // The event log: per shipment exactly one event per sequence 1..POLLS; copies of an id are identical.
  const byId = new Map<string, WebhookEvent>();
  for (const e of seen) {
    const known = byId.get(e.id);
    if (known) expect(e).toEqual(known);
    else byId.set(e.id, e);
  }
  expect(byId.size).toBe(expected);
  for (const awb of awbs) {
    const sequences = [...byId.values()].filter((e) => e.awb === awb).map((e) => e.sequence).sort((a, b) => a - b);
    expect(sequences, awb).toEqual(Array.from({ length: POLLS }, (_, i) => i + 1));
  }
  const lastTypes = new Set([...byId.values()].filter((e) => e.sequence === POLLS).map((e) => e.type));
  expect(lastTypes).toEqual(new Set(['tracking.delivered']));

  // The receiver: every event verified and accepted, in sequence order per shipment.
  await dispatcher!.stop();
  dispatcher = undefined;
  const accepted = receiver.accepted();
  expect(receiver.deliveries.every((d) => d.verifiedWith.length === 1)).toBe(true);
  expect(new Set(accepted.map((d) => d.id))).toEqual(new Set(byId.keys()));
  for (const awb of awbs) {
    const firstArrivals: number[] = [];
    for (const d of accepted) {
      const data = (d.body as { data: { awb: string; sequence: number } }).data;
      if (data.awb === awb && !firstArrivals.includes(data.sequence)) firstArrivals.push(data.sequence);
    }
    expect(firstArrivals, awb).toEqual(Array.from({ length: POLLS }, (_, i) => i + 1));
  }
  // How many copies the kill left on the topic (informative; each is the same event again).
  console.log(`events on the topic: ${seen.length} for ${expected} changes; deliveries: ${receiver.deliveries.length} for ${expected} events`);
}, 400_000);
