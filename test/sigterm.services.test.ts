/**
 * SIGTERM to each app, in a child process under the shared process runner: it stops in its fixed
 * order and exits 0 (the runner exits 1 past its deadline, naming what hung). Each is stopped in
 * the middle of work: the API with lookups in flight (cache misses that poll the sandbox
 * carriers); the normalizer with polls being normalized and written while more arrive; the poller
 * in a tick longer than its deadline (every poll made is on Kafka or spooled); the dispatcher with
 * deliveries in flight to a slow receiver (they complete; the rest go out after a restart, same
 * webhook-id). Real Kafka, ClickHouse and Redis (npm run services -- up), each under names of this
 * file's own.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Kafka } from 'kafkajs';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKeyPrefix, deleteUnder, testRedisUrl } from '../lib/access/testutil/stores.ts';
import { TEST_CLICKHOUSE_URL, countOf, createTestDatabase, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { DEFAULT_CONFIG_DIR } from '../lib/config/index.ts';
import { TEST_BROKERS, testKafka } from '../lib/kafka/testutil/broker.ts';
import { POLLS_TOPIC, pollKey } from '../lib/kafka/topics.ts';
import { startSandbox, type RunningSandbox } from '../lib/sandbox/server.ts';
import { startChildApp, type ChildApp } from '../lib/testutil/child-app.ts';
import { journeyPoll } from '../lib/testutil/polls.ts';
import { RedisKv } from '../lib/kv/index.ts';
import { EndpointStore, KafkaEventLog, WatchStore, type WebhookEvent } from '../lib/push/index.ts';
import { startReceiver } from '../lib/push/testutil/receiver.ts';
import { LOOPBACK_TARGETS } from '../lib/push/testutil/receiver.ts';
import { requireAwb } from '../lib/schemas/index.ts';

const RUN = randomUUID().slice(0, 8);
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
let db: TestDatabase;
let kafka: Kafka;
let sandbox: RunningSandbox;
const dataDir = mkdtempSync(join(tmpdir(), 'sigterm-'));
const children: ChildApp[] = [];
const topics: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  kafka = testKafka();
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
  await sandbox?.close();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function child(options: object, env: Record<string, string>): Promise<ChildApp> {
  const c = await startChildApp('test/app-child.ts', options, { CONFIG_DIR: DEFAULT_CONFIG_DIR, DATA_DIR: dataDir, WEBHOOK_ALLOWED_TARGETS: '127.0.0.1/32', ...env });
  children.push(c);
  return c;
}

async function services() {
  return { KAFKA_BROKERS: TEST_BROKERS, CLICKHOUSE_URL: TEST_CLICKHOUSE_URL, REDIS_URL: await testRedisUrl() };
}

async function terminate(c: ChildApp): Promise<void> {
  c.child.kill('SIGTERM');
  const exit = await c.exited;
  expect(exit, c.stderr()).toEqual({ code: 0, signal: null });
}

/**
 * POST /admin/keys on a child API. CI once saw this first request alone end in ECONNRESET (the
 * run showed nothing of the child): a transport error is tried again, up to three times, while the
 * child is alive; if the child has exited, or the third try fails, the error says what it wrote.
 */
async function createKey(api: ChildApp, body: object) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request(`${api.readyWith}/admin/keys`, {
        method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
    } catch (err) {
      await new Promise((resolve) => setTimeout(resolve, 200)); // a child that died has said so by now
      const exited = api.child.exitCode ?? api.child.signalCode;
      if (attempt === 3 || exited !== null) {
        throw new Error(`creating a key failed (${(err as Error).message}, try ${attempt}); the API child (exit: ${exited ?? 'still running'}) wrote: ${api.stderr()}`, { cause: err });
      }
      console.error(`creating a key: ${(err as Error).message} on try ${attempt}; trying again`);
    }
  }
}

describe('SIGTERM exits 0', () => {
  it('the API, with lookups in flight', async () => {
    const api = await child({ app: 'api' }, { PORT: '0', ADMIN_TOKEN, SANDBOX_URL: sandbox.url, DATA_DIR: join(dataDir, 'api') });
    const base = api.readyWith;
    const created = await createKey(api, {
      plan: 'starter', mode: 'test', email: `sigterm-${RUN}@example.com`, burst_per_second: 10_000, daily_quota: 100_000, lookups_limit: 100_000,
    });
    expect(created.statusCode).toBe(201);
    const { key } = (await created.body.json()) as { key: string };
    // A request that hangs ends its loop with an error (reported below) rather than the test's timeout.
    const agent = new Agent({ connections: 20, headersTimeout: 30_000, bodyTimeout: 30_000 });
    let answered = 0;
    let sending = true;
    let loopsEnded = 0;
    let firstError: unknown = null;
    // 20 loops of lookups of fresh consignments (cache misses: each polls the sandbox).
    const load = Promise.all(Array.from({ length: 20 }, async (_, loop) => {
      for (let i = 0; sending; i++) {
        try {
          const res = await request(`${base}/v1/track/delhivery/${String(1000000 + loop * 10_000 + i).padStart(10, '0')}0102`, { headers: { 'x-api-key': key }, dispatcher: agent });
          await res.body.text();
          answered++;
        } catch (err) {
          firstError ??= err;
          loopsEnded++;
          return; // the server closed: this loop is done
        }
      }
    }));
    // Before the stop, a loop ends only on a transport error: if all did, say why instead of waiting for the test's timeout.
    while (answered < 200) {
      if (loopsEnded === 20) throw new Error(`every lookup loop failed after ${answered} answers (${String(firstError)}); the API child wrote: ${api.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await terminate(api);
    sending = false;
    await load;
    await agent.close();
  }, 120_000);

  it('the normalizer, while polls arrive and are written', async () => {
    const topic = `test-polls-${RUN}`;
    topics.push(topic);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 6, replicationFactor: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    const normalizer = await child({ app: 'normalizer', database: db.target.database, topic, groupId: `test-sigterm-${RUN}`, laneRefreshCron: '0 0 1 1 *' }, await services());
    let producing = true;
    let produced = 0;
    const production = (async () => {
      while (producing) {
        const polls = Array.from({ length: 200 }, (_, i) => ({ ...journeyPoll('delhivery', produced + i), awb: `ST${RUN}${produced + i}` }));
        await producer.send({ topic, messages: polls.map((p) => ({ key: pollKey(p.carrier, p.awb), value: JSON.stringify(p) })) });
        produced += polls.length;
      }
    })();
    try {
      while ((await countOf(db.client, 'SELECT count() AS c FROM carrier_polls')) < 1_000) await new Promise((resolve) => setTimeout(resolve, 50));
      await terminate(normalizer);
    } finally {
      producing = false;
      await production;
      await producer.disconnect();
    }
  }, 120_000);

  it('the poller, in the middle of a tick of 400 due shipments polled against slow sandbox carriers: nothing polled is lost', async () => {
    const namespace = `test:${RUN}:poller:`;
    const digits = String(parseInt(RUN, 16)).padStart(10, '0');
    // Scenario 02 (found, in transit), unique per run: 200 delhivery and 200 bluedart numbers.
    const awbs = [
      ...Array.from({ length: 200 }, (_, i) => ({ carrier: 'delhivery', awb: `9${digits.slice(0, 6)}${String(i).padStart(4, '0')}02` })),
      ...Array.from({ length: 200 }, (_, i) => ({ carrier: 'bluedart', awb: `${digits.slice(0, 5)}${String(i).padStart(4, '0')}02` })),
    ];
    const ours = new Set(awbs.map((a) => a.awb));
    const redis = new Redis(await testRedisUrl());
    const proxy = await slowCountingProxy(sandbox.url, 300, ours);
    const pollerDir = join(dataDir, 'poller');
    const polls = await pollsOnKafkaFrom(ours);
    try {
      const watches = new WatchStore(new RedisKv(redis, `${namespace}push:`));
      const now = Date.now();
      const keyPrefix = await createTestKeyPrefix(redis, `${namespace}access:`);
      for (const { carrier, awb } of awbs) {
        await watches.create({ keyPrefix, mode: 'test', carrier, awb: requireAwb(awb), record: null, polledMs: now - 600_000, terminal: false, nowMs: now });
      }
      // A tick every second takes every due shipment: 400 at 4 in flight per carrier, 300 ms each,
      // is ~15 s of work, longer than the 10 s deadline: the stop must not wait for the whole tick.
      const poller = await child({
        app: 'poller', database: db.target.database, redisNamespace: namespace, notices: false, sandboxUrl: proxy.url, deadlineMs: 10_000,
        tickCron: '* * * * * *', policy: { intervalMs: 60_000, tickMs: 60_000, lookbackMs: 30 * 86_400_000 },
      }, { ...(await services()), DATA_DIR: pollerDir });
      await until(() => proxy.requests() >= 40, 'the poller polling');
      await terminate(poller);
      const served = proxy.requests();
      expect(served).toBeLessThan(awbs.length);
      // Every poll the carriers answered is on Kafka, or spooled for the next start to publish.
      const spooled = spooledPolls(pollerDir, ours);
      await until(() => polls.ids().size + spooled.length >= served, `${served} polls on Kafka or spooled`);
      expect(new Set([...polls.ids(), ...spooled]).size).toBe(served);
      expect(polls.count() + spooled.length).toBe(served);
    } finally {
      await polls.stop();
      await proxy.close();
      await deleteUnder(redis, namespace);
      redis.disconnect();
    }
  }, 180_000);

  it('the dispatcher, with deliveries in flight to a slow receiver: those finish, the rest are delivered after a restart', async () => {
    const namespace = `test:${RUN}:dispatcher:`;
    const redis = new Redis(await testRedisUrl());
    const kv = new RedisKv(redis, `${namespace}push:`);
    // A real key beside the queues: the dispatcher asks its standing before every attempt.
    const prefix = await createTestKeyPrefix(redis, `${namespace}access:`);
    const receiver = await startReceiver();
    const events = new KafkaEventLog(kafka);
    try {
      const { secret } = await new EndpointStore(kv, Date.now, { allowedTargets: LOOPBACK_TARGETS }).create(prefix, 'test', { url: receiver.url }, Date.now());
      receiver.setSecrets([secret]);
      // Every first attempt takes 3 s: the SIGTERM comes while many are in flight.
      receiver.respond(({ attemptOfThisId }) => ({ status: 204, delayMs: attemptOfThisId === 1 ? 3_000 : 0 }));
      const options = { app: 'dispatcher', database: db.target.database, redisNamespace: namespace, groupId: `test-sigterm-dispatcher-${RUN}` };
      const env = await services();
      const first = await child({ ...options, fromLatest: true }, env);
      await until(async () => (await request(`http://127.0.0.1:${first.readyWith}/readyz`)).statusCode === 200, 'the dispatcher reading events');
      // 30 shipments, 3 events each (sequence 1-3), on the events topic as change detection writes them.
      const all = Array.from({ length: 30 }, (_, s) => [1, 2, 3].map((sequence) => webhookEvent(prefix, `SD${RUN}${s}`, sequence))).flat();
      await events.publish(all);
      await receiver.waitFor((r) => r.deliveries.length >= 10, 60_000);
      await terminate(first);
      // The attempts in flight at the SIGTERM were completed before the exit, not cut off.
      const beforeExit = [...receiver.deliveries];
      expect(beforeExit.every((d) => d.answered === true && d.answeredStatus === 204)).toBe(true);
      expect(beforeExit.length).toBeLessThan(all.length);

      // The receiver is quick again: the rest goes through after the restart.
      receiver.respond(() => ({ status: 204 }));
      const second = await child(options, env);
      await receiver.waitFor((r) => new Set(r.accepted().map((d) => d.id)).size >= all.length, 120_000);
      await terminate(second);
      expect(new Set(receiver.accepted().map((d) => d.id))).toEqual(new Set(all.map((e) => e.id)));
      // An id delivered twice is the same event, byte for byte; order is kept per shipment.
      for (const d of receiver.deliveries) {
        expect(d.verifiedWith).toEqual([0]);
        expect(d.rawBody).toBe(all.find((e) => e.id === d.id)!.body);
      }
      for (let s = 0; s < 30; s++) {
        const firsts: number[] = [];
        for (const d of receiver.deliveries) {
          const { awb, sequence } = (d.body as { data: { awb: string; sequence: number } }).data;
          if (awb === `SD${RUN}${s}` && !firsts.includes(sequence)) firsts.push(sequence);
        }
        expect(firsts).toEqual([1, 2, 3]);
      }
    } finally {
      await events.close();
      await receiver.close();
      await deleteUnder(redis, namespace);
      redis.disconnect();
    }
  }, 240_000);
});

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A webhook event as the pipeline carries it (only what the dispatcher reads matters here). */
function webhookEvent(prefix: string, awb: string, sequence: number): WebhookEvent {
  const createdAt = new Date().toISOString();
  return {
    schema: 'webhook_event.v1', id: `evt_${prefix}_${awb}_${sequence}`, key_prefix: prefix, mode: 'test', type: 'tracking.updated',
    carrier: 'delhivery', awb, sequence, created_at: createdAt,
    body: JSON.stringify({ type: 'tracking.updated', timestamp: createdAt, data: { carrier: 'delhivery', awb, sequence } }),
  };
}

/**
 * In front of the sandbox: holds every request `delayMs` (a slow carrier) and counts those naming
 * one of `awbs` (the requests this test's poller made; other runs' numbers are not counted).
 */
async function slowCountingProxy(target: string, delayMs: number, awbs: ReadonlySet<string>) {
  let count = 0;
  const server = createServer((req, res) => {
    if ([...(req.url ?? '').matchAll(/\d+/g)].some((m) => awbs.has(m[0]))) count++;
    setTimeout(() => {
      const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers, agent: false }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => count,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Poll ids of `awbs` published on the raw-poll topic from now on (read from the topic's current end). */
async function pollsOnKafkaFrom(awbs: ReadonlySet<string>) {
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(POLLS_TOPIC).finally(() => admin.disconnect());
  const ids = new Set<string>();
  let count = 0;
  const consumer = kafka.consumer({ groupId: `test-sigterm-polls-${RUN}` });
  await consumer.connect();
  await consumer.subscribe({ topic: POLLS_TOPIC });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const poll = JSON.parse(message.value?.toString() ?? 'null') as { awb?: string; poll_id?: string } | null;
      if (poll?.awb && awbs.has(poll.awb) && poll.poll_id) { ids.add(poll.poll_id); count++; }
    },
  });
  for (const { partition, offset } of offsets) consumer.seek({ topic: POLLS_TOPIC, partition, offset });
  return { ids: () => ids, count: () => count, stop: () => consumer.disconnect() };
}

/** Poll ids of `awbs` in a DATA_DIR's spool (polls not yet on Kafka when the process stopped). */
function spooledPolls(dir: string, awbs: ReadonlySet<string>): string[] {
  const file = join(dir, 'spool', 'carrier-polls.ndjson');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean)
    .map((line) => JSON.parse(line) as { value?: string })
    .map((m) => JSON.parse(m.value ?? 'null') as { awb?: string; poll_id?: string } | null)
    .filter((p) => p?.awb && awbs.has(p.awb))
    .map((p) => p!.poll_id!);
}
