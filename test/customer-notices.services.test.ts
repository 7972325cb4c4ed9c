/**
 * Customer notices in distributed mode against the real services (issue 43's personal-data test on
 * Redis, Kafka and ClickHouse): the API on Redis + Kafka + ClickHouse, the normalizer app (ClickHouse
 * rows, push's change detection) and the dispatcher app (webhook events from Kafka, and the
 * notices, sent to the sandbox providers). A watch carries a marker phone and e-mail; the shipment
 * (sandbox scenario 26) goes through its life; the notices arrive; afterwards the markers are in no
 * Kafka message of either topic, no ClickHouse row of the database, no Redis value of the namespace
 * in plain text, no file under DATA_DIR and no answer.
 *
 * Isolation: a Redis namespace, a ClickHouse database and consumer groups of this file's own.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startDispatcher, type DispatcherApp } from '../apps/dispatcher/start.ts';
import { startNormalizer, type NormalizerApp } from '../apps/normalizer/start.ts';
import { awbFor, MINUTE_MS, startApiHarness, type ApiHarness } from '../apps/api/testutil/harness.ts';
import { testRedisUrl } from '../lib/access/testutil/stores.ts';
import { TEST_CLICKHOUSE_URL, createTestDatabase, rowsOf, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../lib/config/index.ts';
import { TEST_BROKERS, collect, testKafka } from '../lib/kafka/testutil/broker.ts';
import { POLLS_TOPIC, ensureTopics } from '../lib/kafka/topics.ts';
import { WEBHOOK_EVENTS_TOPIC, ensureWebhookTopic } from '../lib/push/index.ts';
import { startMessagingSandbox, type RunningMessaging } from '../lib/sandbox/messaging.ts';

const RUN = randomBytes(4).toString('hex');
const MARKER_DIGITS = `98${String(Date.now()).slice(-8)}`;
const MARKER_EMAIL = `marker.${RUN}@example.com`;
const CONTACT_KEY = randomBytes(32).toString('base64');
const leaked = (text: string) => text.includes(MARKER_DIGITS) || text.includes(MARKER_EMAIL);

let db: TestDatabase;
let api: ApiHarness;
let messaging: RunningMessaging;
let normalizer: NormalizerApp;
let dispatcher: DispatcherApp;

beforeAll(async () => {
  db = await createTestDatabase();
  const kafka = testKafka();
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin);
  await admin.disconnect();
  await ensureWebhookTopic(kafka);
  messaging = await startMessagingSandbox();
  const services = { KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, CONTACT_ENCRYPTION_KEY: CONTACT_KEY };
  api = await startApiHarness({ store: 'redis', env: services, clickhouseDatabase: db.target.database });
  const env = loadEnv({ DATA_DIR: api.dataDir, CONFIG_DIR: DEFAULT_CONFIG_DIR, LOG_LEVEL: 'silent', REDIS_URL: await testRedisUrl(), ...services });
  normalizer = await startNormalizer(env, {
    database: db.target.database, redisNamespace: api.namespace, groupId: `normalizer-${RUN}`, pushGroupId: `detector-${RUN}`, fromLatest: true, healthPort: null,
  });
  dispatcher = await startDispatcher(env, {
    database: db.target.database, redisNamespace: api.namespace, groupId: `dispatcher-${RUN}`, fromLatest: true, healthPort: null, messagingSandbox: messaging,
  });
}, 120_000);

afterAll(async () => {
  await dispatcher?.stop();
  await normalizer?.stop();
  await api?.close();
  await messaging?.close();
  await db?.drop();
}, 60_000);

it('sends the notices from the dispatcher app, and leaves the customer\'s phone and e-mail nowhere', async () => {
  const key = (await api.createKey({ plan: 'business', mode: 'test', burst_per_second: 1000 })).key;
  const call = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) =>
    api.app.inject({ method, url, headers: { 'x-api-key': key }, ...(body === undefined ? {} : { payload: body as object }) });
  expect((await call('PUT', '/v1/notices/settings', { quiet_hours: null })).statusCode).toBe(200);
  const awb = awbFor('delhivery', 26, 7);
  const watched = await call('POST', '/v1/trackings', {
    carrier: 'delhivery', awb, customer: { phone: `+91${MARKER_DIGITS}`, email: MARKER_EMAIL, language: 'ta', channels: ['sms', 'email'], consent: true },
  });
  expect(watched.statusCode, watched.body).toBe(201);
  const mine = () => messaging.received().filter((m) => m.variables.awb === awb);
  // Scenario 26 moves a stage per poll: picked up, a hub, out for delivery, a failed attempt.
  const wanted = ['picked_up', 'out_for_delivery', 'failed_attempt'];
  for (let i = 0; i < 4; i++) {
    api.clock.advance(31 * MINUTE_MS);
    expect((await api.track(key, 'delhivery', awb)).statusCode).toBe(200);
    await api.runtime.bus.flush();
  }
  await vi.waitFor(() => expect(mine().length).toBeGreaterThanOrEqual(wanted.length), { timeout: 60_000, interval: 100 });
  expect(mine().map((m) => m.template)).toEqual(wanted.map((k) => ({
    picked_up: '6560a1000000000000000103', out_for_delivery: '6560a1000000000000000203', failed_attempt: '6560a1000000000000000403',
  } as Record<string, string>)[k]));
  expect(mine().every((m) => m.channel === 'sms' && m.language === 'ta')).toBe(true);
  const listed = (await call('GET', `/v1/notices?carrier=delhivery&awb=${awb}`)).json() as { notices: { event: string; status: string }[] };
  expect(listed.notices.map((n) => n.event).reverse()).toEqual(wanted);

  // Kafka: both topics, read whole.
  const kafkaText = async (topic: string) => (await collect(testKafka(), topic, (_k, value) => value, () => false, 8_000)).join('\n');
  const polls = await kafkaText(POLLS_TOPIC);
  const events = await kafkaText(WEBHOOK_EVENTS_TOPIC);
  expect(events).toContain(awb);
  expect(leaked(polls)).toBe(false);
  expect(leaked(events)).toBe(false);
  // ClickHouse: every table of this database, every row.
  const tables = await rowsOf<{ name: string }>(db.client, `SELECT name FROM system.tables WHERE database = '${db.target.database}'`);
  expect(tables.length).toBeGreaterThan(3);
  for (const { name } of tables) {
    const rows = await rowsOf<unknown>(db.client, `SELECT * FROM ${db.target.database}.${name}`);
    expect(leaked(JSON.stringify(rows)), name).toBe(false);
  }
  // Redis: every value under the namespace (the contact is sealed there, never plain).
  const redis = new Redis(await testRedisUrl());
  try {
    let values = '';
    for (const k of await redis.keys(`${api.namespace}*`) as string[]) {
      const type = await redis.type(k);
      if (type === 'string') values += await redis.get(k);
      else if (type === 'set') values += (await redis.smembers(k)).join(',');
      else if (type === 'zset') values += (await redis.zrange(k, '0', '-1')).join(',');
      else if (type === 'list') values += (await redis.lrange(k, 0, -1)).join(',');
      else if (type === 'hash') values += JSON.stringify(await redis.hgetall(k));
    }
    expect(values).toContain('sealed');
    expect(leaked(values)).toBe(false);
  } finally {
    redis.disconnect();
  }
  // Files under DATA_DIR and every answer the API gave.
  for (const entry of await readdir(api.dataDir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) expect(leaked((await readFile(join(entry.parentPath, entry.name))).toString('latin1')), entry.name).toBe(false);
  }
  expect(api.answers.filter((a) => leaked(JSON.stringify(a)))).toEqual([]);
}, 120_000);
