/**
 * Push in distributed mode against the real services: the API on Redis + Kafka, two change
 * detectors in one consumer group on the raw-poll topic (what each normalizer runs), two dispatcher
 * apps in one group on tracking.webhook-events.v1, every attempt a row of webhook_deliveries, and a
 * loopback receiver verifying every delivery with the standardwebhooks package.
 *
 * Isolation: a Redis namespace and a ClickHouse database of this file's own, consumer groups of its
 * own starting at the topics' end, so other runs' polls and events pass through untouched.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDispatcher, type DispatcherApp } from '../apps/dispatcher/start.ts';
import { startApiHarness, type ApiHarness } from '../apps/api/testutil/harness.ts';
import { TEST_CLICKHOUSE_URL, countOf, createTestDatabase, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../lib/config/index.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import { ensureTopics } from '../lib/kafka/topics.ts';
import { loadProduct } from '../lib/product/index.ts';
import { RedisKv } from '../lib/kv/index.ts';
import { ChangeDetector, KafkaEventLog, PollChangeConsumer, ensureWebhookTopic, pushKeys, type QueueDoc } from '../lib/push/index.ts';
import { startReceiver, type Receiver } from '../lib/push/testutil/receiver.ts';
import { Redis } from 'ioredis';
import { testRedisUrl } from '../lib/access/testutil/stores.ts';
import { requireAwb } from '../lib/schemas/index.ts';

const RUN = randomBytes(4).toString('hex');
let db: TestDatabase;
let api: ApiHarness;
let receiver: Receiver;
const detectors: { consumer: PollChangeConsumer; close(): Promise<void> }[] = [];
const dispatchers: DispatcherApp[] = [];

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  const kafka = testKafka();
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin);
  await admin.disconnect();
  await ensureWebhookTopic(kafka);
  api = await startApiHarness({ store: 'redis', env: { KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL }, clickhouseDatabase: db.target.database });
  receiver = await startReceiver();
  const env = loadEnv({ DATA_DIR: api.dataDir, CONFIG_DIR: DEFAULT_CONFIG_DIR, LOG_LEVEL: 'silent', WEBHOOK_ALLOWED_TARGETS: '127.0.0.1/32', REDIS_URL: await testRedisUrl(), KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL });
  const product = loadProduct(DEFAULT_CONFIG_DIR);
  for (let i = 0; i < 2; i++) {
    const redis = new Redis(env.REDIS_URL!);
    const events = new KafkaEventLog(testKafka());
    const detector = new ChangeDetector({
      kv: new RedisKv(redis, `${api.namespace}push:`), events, lanes: { get: async () => null }, standing: api.runtime.push.standing, clock: Date.now,
    });
    const consumer = new PollChangeConsumer({ kafka: testKafka(), detector, rules: product.rules, resolveCarrier: (n) => product.registry.resolve(n), groupId: `push-detector-${RUN}`, fromLatest: true });
    await consumer.start();
    detectors.push({ consumer, async close() { await consumer.stop(); await events.close(); redis.disconnect(); } });
    dispatchers.push(await startDispatcher(env, { database: db.target.database, redisNamespace: api.namespace, groupId: `dispatcher-${RUN}`, fromLatest: true, healthPort: null }));
  }
  await waitUntil(() => detectors.every((d) => d.consumer.isHealthy()), 60_000);
}, 120_000);

afterAll(async () => {
  for (const d of dispatchers) await d.stop();
  for (const d of detectors) await d.close();
  await receiver?.close();
  await api?.close();
  await db?.drop();
}, 60_000);

it('two detectors and two dispatchers: scenario 25 arrives once per stage, in order, every attempt in webhook_deliveries', async () => {
  const key = (await api.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 })).key;
  const created = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: receiver.url } });
  expect(created.statusCode, created.body).toBe(201);
  receiver.setSecrets([(created.json() as { secret: string }).secret]);
  // Unique per run: the sandbox keeps a progression per number.
  const awb = `9${RUN.replace(/\D/g, '1').padEnd(8, '7').slice(0, 8)}0125`;
  const watched = await api.app.inject({ method: 'POST', url: '/v1/trackings', headers: { 'x-api-key': key }, payload: { carrier: 'delhivery', awb } });
  expect(watched.statusCode, watched.body).toBe(201);
  for (let round = 0; round < 5; round++) {
    api.clock.advance(2 * 3_600_000);
    await api.deps.tracking.refresh('delhivery', requireAwb(awb), 'test');
  }
  await api.runtime.bus.flush();
  await receiver.waitFor((r) => r.accepted().length >= 4, 30_000);
  // Nothing more comes: no event twice.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const events = receiver.accepted();
  expect(events.map((d) => (d.body as { data: { sequence: number } }).data.sequence)).toEqual([1, 2, 3, 4]);
  expect(events.map((d) => (d.body as { type: string }).type)).toEqual(['tracking.updated', 'tracking.updated', 'tracking.out_for_delivery', 'tracking.delivered']);
  expect(new Set(events.map((d) => d.id)).size).toBe(4);
  expect(receiver.deliveries).toHaveLength(4);

  for (const d of dispatchers) await d.stop();
  dispatchers.length = 0;
  expect(await countOf(db.client, `SELECT count() AS c FROM webhook_deliveries FINAL WHERE awb = '${awb}' AND status_code = 204`)).toBe(4);
}, 90_000);

/** A dispatcher app in its own process, to be killed with SIGKILL. */
async function dispatcherChild(env: Record<string, string>, options: object): Promise<ChildProcess> {
  // node itself (it strips the types): the killed process is the dispatcher, with no launcher between.
  const child = spawn(process.execPath, [join(import.meta.dirname, '../apps/dispatcher/testutil/child.ts'), JSON.stringify(options)], {
    env: { ...process.env, WEBHOOK_ALLOWED_TARGETS: '127.0.0.1/32', ...env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('ready')) resolve(); });
    child.once('exit', (code) => reject(new Error(`dispatcher child exited with ${code}: ${stderr}`)));
  });
  // Nothing more is read from it: its pipes must not keep the test process alive.
  child.stdout!.destroy();
  child.stderr!.destroy();
  return child;
}

it('a dispatcher killed with SIGKILL mid-delivery: another one delivers everything, duplicates carry the same webhook-id', async () => {
  for (const d of dispatchers) await d.stop();
  dispatchers.length = 0;
  const { key, key_prefix: prefix } = await api.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 });
  const kill = await startReceiver();
  try {
    const created = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: kill.url } });
    const { id, secret } = created.json() as { id: string; secret: string };
    kill.setSecrets([secret]);
    // The first attempt of every event hangs long enough for the kill to land in the middle of it.
    kill.respond(({ attemptOfThisId }) => ({ status: 204, delayMs: attemptOfThisId === 1 ? 5_000 : 0 }));
    const env = { REDIS_URL: await testRedisUrl(), KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, DATA_DIR: api.dataDir, CONFIG_DIR: DEFAULT_CONFIG_DIR };
    const options = { database: db.target.database, redisNamespace: api.namespace, groupId: `dispatcher-kill-${RUN}`, leaseMs: 3_000, attemptRows: ROWS_SOON };
    const first = await dispatcherChild(env, { ...options, fromLatest: true });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/test`, headers: { 'x-api-key': key } });
      ids.push((res.json() as { event_id: string }).event_id);
    }
    await kill.waitFor((r) => r.deliveries.length >= 1, 30_000);
    // Every event queued before the kill: this is about deliveries in flight and queued in Redis, and the
    // group's offsets may not be committed yet (a second dispatcher would then read the topic from its start).
    const redis = new Redis(await testRedisUrl());
    const queues = new RedisKv(redis, `${api.namespace}push:`);
    await waitUntil(async () => {
      const queue = await queues.get<QueueDoc>(pushKeys.queue(prefix, id, 'webhook.test'));
      return ids.every((e) => queue?.pending.some((p) => p.id === e) || kill.accepted().some((d) => d.id === e));
    }).finally(() => redis.disconnect());
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const second = await dispatcherChild(env, options);
    try {
      await kill.waitFor((r) => new Set(r.accepted().map((d) => d.id)).size >= 5, 60_000);
      // Every attempt that reached the receiver is a row of webhook_deliveries, the one the kill cut
      // short too (written by the second dispatcher's reconciler, as interrupted).
      await expectEveryAttemptARow(ids, kill);
    } finally {
      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));
    }
    expect(new Set(kill.accepted().map((d) => d.id))).toEqual(new Set(ids));
    // At least once: an id seen twice is the same event, byte for byte.
    for (const delivery of kill.deliveries) {
      const twin = kill.deliveries.find((d) => d.id === delivery.id && d !== delivery);
      if (twin) expect(twin.rawBody).toBe(delivery.rawBody);
    }
    expect(kill.deliveries.every((d) => d.verifiedWith.length === 1)).toBe(true);
  } finally {
    await kill.close();
  }
}, 120_000);

it('a dispatcher killed with SIGKILL right after an attempt: the attempt is still a row of webhook_deliveries', async () => {
  const { key } = await api.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 });
  const quick = await startReceiver();
  try {
    const created = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: quick.url } });
    const { id, secret } = created.json() as { id: string; secret: string };
    quick.setSecrets([secret]);
    quick.respond(() => ({ status: 204, delayMs: 0 }));
    const env = { REDIS_URL: await testRedisUrl(), KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, DATA_DIR: api.dataDir, CONFIG_DIR: DEFAULT_CONFIG_DIR };
    const options = { database: db.target.database, redisNamespace: api.namespace, groupId: `dispatcher-rows-${RUN}`, leaseMs: 3_000, attemptRows: ROWS_SOON };
    const first = await dispatcherChild(env, { ...options, fromLatest: true });
    // A new group's "latest" is fixed at its first fetch, which may come after the first event:
    // test events until one arrives (each a row to find, if delivered, since it was sent).
    const eventIds: string[] = [];
    for (let i = 0; i < 15 && quick.accepted().length === 0; i++) {
      const res = await api.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/test`, headers: { 'x-api-key': key } });
      eventIds.push((res.json() as { event_id: string }).event_id);
      await quick.waitFor((r) => r.accepted().length >= 1, 2_000).catch(() => undefined);
    }
    // Killed the moment the receiver has answered: the row cannot have reached ClickHouse through
    // the writer (it batches for a second), only through what the attempt left in Redis.
    await quick.waitFor((r) => r.accepted().length >= 1, 30_000);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const second = await dispatcherChild(env, options);
    try {
      await expectEveryAttemptARow(eventIds.filter((e) => quick.deliveries.some((d) => d.id === e)), quick);
    } finally {
      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));
    }
  } finally {
    await quick.close();
  }
}, 120_000);

/**
 * The reconciler takes rows a dead dispatcher left after 8 s (the default is 2 minutes), looking
 * every second: still longer than an attempt here (the receiver holds first attempts 5 s), as the
 * default is longer than the 15 s attempt timeout.
 */
const ROWS_SOON = { orphanAfterMs: 8_000, everyMs: 1_000 };

/** Waits until each event has at least as many webhook_deliveries rows as the receiver saw attempts of it. */
async function expectEveryAttemptARow(eventIds: string[], seenBy: Receiver): Promise<void> {
  const wanted = new Map(eventIds.map((e) => [e, seenBy.deliveries.filter((d) => d.id === e).length]));
  expect([...wanted.values()].every((n) => n >= 1)).toBe(true);
  const rowsOf = async () => {
    const rows = await countRows(eventIds);
    return [...wanted].every(([e, n]) => (rows.get(e) ?? 0) >= n);
  };
  await waitUntil(rowsOf, 60_000).catch(async (err: unknown) => {
    const rows = await db.client.query({ query: `SELECT * FROM webhook_deliveries WHERE event_id IN (${eventIds.map((e) => `'${e}'`).join(',')})`, format: 'JSONEachRow' });
    throw new Error(`${(err as Error).message}: attempts seen ${JSON.stringify([...wanted])}, rows ${JSON.stringify(await rows.json())}`);
  });
}

async function countRows(eventIds: string[]): Promise<Map<string, number>> {
  const list = eventIds.map((e) => `'${e}'`).join(',');
  const result = await db.client.query({
    query: `SELECT event_id, count() AS c FROM (SELECT DISTINCT * FROM webhook_deliveries WHERE event_id IN (${list})) GROUP BY event_id`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ event_id: string; c: string }>();
  return new Map(rows.map((r) => [r.event_id, Number(r.c)]));
}

it('a dispatcher app that disables an endpoint (410) e-mails the owner of the key, found under its own Redis namespace', async () => {
  const { key, email } = await api.createKey({ plan: 'starter', mode: 'test', burst_per_second: 1000 });
  const gone = await startReceiver();
  const env = loadEnv({ DATA_DIR: api.dataDir, CONFIG_DIR: DEFAULT_CONFIG_DIR, LOG_LEVEL: 'silent', WEBHOOK_ALLOWED_TARGETS: '127.0.0.1/32', REDIS_URL: await testRedisUrl(), KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL });
  const dispatcher = await startDispatcher(env, { database: db.target.database, redisNamespace: api.namespace, groupId: `dispatcher-gone-${RUN}`, fromLatest: true, healthPort: null });
  try {
    const created = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': key }, payload: { url: gone.url } });
    const { id, secret } = created.json() as { id: string; secret: string };
    gone.setSecrets([secret]);
    gone.respond(() => ({ status: 410 }));
    const status = async () => ((await api.app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: { 'x-api-key': key } })).json() as { status: string }).status;
    // A consumer group starting at the topic's end may join after a first event: send until one arrives.
    await waitUntil(async () => {
      if (gone.deliveries.length === 0) await api.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/test`, headers: { 'x-api-key': key } });
      await new Promise((resolve) => setTimeout(resolve, 500));
      return (await status()) === 'disabled';
    }, 60_000);
    const outbox = join(api.dataDir, 'outbox');
    await waitUntil(() => existsSync(outbox) && readdirSync(outbox).some((f) => readFileSync(join(outbox, f), 'utf8').includes(`Webhook endpoint ${id} disabled`)));
    const mail = readdirSync(outbox).map((f) => readFileSync(join(outbox, f), 'utf8')).find((m) => m.includes(`Webhook endpoint ${id} disabled`))!;
    expect(mail).toContain(email);
  } finally {
    await dispatcher.stop();
    await gone.close();
  }
}, 90_000);
