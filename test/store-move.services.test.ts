/**
 * `store move`: a busy embedded store (keys with lookups counted, a webhook endpoint and a watch, a
 * payment, an analysis, an Idempotency-Key answer, the raw-poll log) moved into the real Redis and
 * Kafka, then the API started on that Redis answers all of it as the embedded one did: every key
 * authenticates with the same counts, the endpoint signs with the same secret, the payment is
 * already applied, the analysis is there, the batch answer replays. Run twice, the move does
 * nothing the second time; into a Redis holding other keys it refuses without --force. On one
 * Redis and on the Redis Cluster.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiBanner } from '../apps/api/context/banner.ts';
import { runCli } from '../apps/cli/commands/cli.ts';
import { waitFor } from '../apps/api/testutil/analyses.suite.ts';
import { deliver } from '../apps/api/testutil/billing.suite.ts';
import { awbFor, redisUrlOf, startApiHarness, type ApiHarness } from '../apps/api/testutil/harness.ts';
import { signWebhook } from '../lib/billing/index.ts';
import { DEFAULT_CONFIG_DIR, loadEnv, loadPlans } from '../lib/config/index.ts';
import { TEST_BROKERS, collect, testKafka } from '../lib/kafka/testutil/broker.ts';
import { moveStore, readMovedMarker, unmovedEmbeddedState, type MoveOptions } from '../lib/move/index.ts';
import { startReceiver, type Receiver } from '../lib/push/testutil/receiver.ts';
import { formatBanner } from '../lib/process/banner.ts';
import { connectRedis } from '../lib/redis/index.ts';
import { deleteUnder } from '../lib/redis/testutil/cluster.ts';
import { paymentLinkPaidEvent, startGatewaySandbox, type RunningGateway } from '../lib/sandbox/gateway.ts';

describe.each(['redis', 'redis-cluster'] as const)('store move: a busy embedded store into Redis (%s) and Kafka', (store) => {
  let gateway: RunningGateway;
  let receiver: Receiver;
  let embedded: ApiHarness;
  let moved: ApiHarness | undefined;
  let copy: string;
  let redisUrl: string;
  const namespace = `test:${randomBytes(6).toString('hex')}:move:`;
  const topic = `test.store-move.${randomBytes(6).toString('hex')}`;

  /** What the embedded API answered, to compare the moved one with. */
  const keys: { key: string; prefix: string; lookups: number }[] = [];
  let growthKey = '';
  let endpointId = '';
  let analysisId = '';
  let analysisReport: unknown;
  let batchAnswer = '';
  const batchBody = { items: [{ carrier: 'delhivery', awb: awbFor('delhivery', 22, 5) }] };
  const idempotencyKey = `order-sync-${randomBytes(4).toString('hex')}`;
  let paymentBody = '';
  let paymentSignature = '';
  let pollLines = 0;

  const call = (h: ApiHarness, key: string, method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({ method, url, headers: { 'x-api-key': key, ...headers }, ...(body === undefined ? {} : { payload: body as object }) });
  const moveOptions = (overrides: Partial<MoveOptions> = {}): MoveOptions => ({
    dataDir: copy, redisUrl, kafkaBrokers: TEST_BROKERS, plans: loadPlans(DEFAULT_CONFIG_DIR), namespace, topic, force: false, clock: embedded.clock.now,
    ...overrides,
  });

  beforeAll(async () => {
    redisUrl = (await redisUrlOf(store))!;
    const admin = testKafka().admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
    await admin.disconnect();
    gateway = await startGatewaySandbox();
    receiver = await startReceiver();
    embedded = await startApiHarness({ paymentSandbox: gateway });

    // Busy: eight keys, each with its own number of lookups, sent all at once.
    for (let i = 0; i < 8; i++) {
      const created = await embedded.createKey({ plan: 'starter', mode: 'test', burst_per_second: 100 });
      keys.push({ key: created.key, prefix: created.key_prefix, lookups: i + 1 });
    }
    await Promise.all(keys.flatMap(({ key, lookups }) => Array.from({ length: lookups }, (_, n) => embedded.track(key, 'delhivery', awbFor('delhivery', 2, (n % 5) + 1)))
      .map(async (answer) => expect((await answer).statusCode).toBe(200))));

    // A growth key: an endpoint, a watch, an analysis, a batch with an Idempotency-Key, a payment.
    const growth = await embedded.createKey({ plan: 'growth', mode: 'test', burst_per_second: 100 });
    growthKey = growth.key;
    const endpoint = await call(embedded, growthKey, 'POST', '/v1/webhooks', { url: receiver.url });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    ({ id: endpointId } = endpoint.json() as { id: string });
    receiver.setSecrets([(endpoint.json() as { secret: string }).secret]);
    expect((await call(embedded, growthKey, 'POST', '/v1/trackings', { carrier: 'delhivery', awb: awbFor('delhivery', 25) })).statusCode).toBe(201);
    const posted = await call(embedded, growthKey, 'POST', '/v1/analyses', { name: 'before the move', shipments: [{ awb: '1234567000104', carrier: 'delhivery' }] });
    expect(posted.statusCode, posted.body).toBe(202);
    analysisId = (posted.json() as { id: string }).id;
    analysisReport = await waitFor(async () => (await call(embedded, growthKey, 'GET', `/v1/analyses/${analysisId}`)).json() as { status: string }, (v) => v.status === 'completed');
    const batch = await call(embedded, growthKey, 'POST', '/v1/track/batch', batchBody, { 'idempotency-key': idempotencyKey });
    expect(batch.statusCode, batch.body).toBe(200);
    batchAnswer = batch.body;
    paymentBody = JSON.stringify(paymentLinkPaidEvent({
      id: 'plink_move0000001', amount: 39_900, currency: 'INR', reference_id: 'rn_storemovestoremove', description: 'starter',
      notes: { key_prefix: keys[0]!.prefix, plan: 'starter' },
    }, 'pay_move00000001', Math.floor(embedded.clock.now() / 1000)));
    paymentSignature = signWebhook(paymentBody, gateway.webhookSecret);
    const paid = await embedded.app.inject({
      method: 'POST', url: '/billing/razorpay/webhook', payload: paymentBody,
      headers: { 'content-type': 'application/json', 'x-razorpay-signature': paymentSignature },
    });
    expect(paid.json()).toEqual({ received: true, outcome: 'applied' });
    // The payment renewed the first key: a new period, its counts from zero.
    keys[0]!.lookups = 0;
    for (const k of keys) expect((await embedded.usage(k.key)).period.lookups_used).toBe(k.lookups);

    // The embedded store as it is on disk now (every change is written before it is answered).
    await embedded.runtime.bus.flush();
    copy = await mkdtemp(join(tmpdir(), 'store-move-'));
    await cp(embedded.dataDir, copy, { recursive: true });
    pollLines = (await readFile(join(copy, 'polls.ndjson'), 'utf8')).split('\n').filter(Boolean).length;
  }, 120_000);

  afterAll(async () => {
    await moved?.close();
    await embedded?.close();
    await receiver?.close();
    await gateway?.close();
    if (copy) await rm(copy, { recursive: true, force: true });
    const redis = connectRedis(redisUrl);
    await deleteUnder(redis, namespace);
    await redis.quit();
    const admin = testKafka().admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    await admin.disconnect();
  });

  it('says the DATA_DIR holds an unmoved store before, and nothing after', async () => {
    expect(unmovedEmbeddedState(copy)).toEqual(['keys', 'payments', 'watches, webhooks and analyses', 'the raw-poll log']);
    // npm run api's banner against the services, beside it.
    const banner = () => formatBanner(apiBanner(loadEnv({ REDIS_URL: redisUrl, KAFKA_BROKERS: TEST_BROKERS, DATA_DIR: copy }), {
      url: 'http://127.0.0.1:3000', adminToken: 'x'.repeat(32), adminTokenGenerated: false, adminTokenFile: null,
    }));
    expect(banner()).toMatch(/DATA_DIR: +\S+ holds an embedded store that was not moved here \(keys, payments, .*npm run cli -- store move/);
    const summary = await moveStore(moveOptions());
    expect(summary).toMatchObject({
      outcome: 'moved', keys: keys.length + 1, payments: 1, idempotency_answers: 1, polls: { sent: pollLines, skipped: 0, damaged: 0 },
    });
    expect(summary.counted_lookups).toBe(keys.reduce((sum, k) => sum + k.lookups, 0) + 2);
    expect(unmovedEmbeddedState(copy)).toEqual([]);
    expect(banner()).not.toContain('DATA_DIR:');
    expect(readMovedMarker(copy)).toMatchObject({ namespace, topic, kafka: TEST_BROKERS });
  }, 60_000);

  it('run again, it does nothing; --force writes the same again', async () => {
    expect(await moveStore(moveOptions())).toMatchObject({ outcome: 'already_moved', keys: 0, polls: null });
    expect(await moveStore(moveOptions({ force: true }))).toMatchObject({ outcome: 'moved', keys: keys.length + 1, polls: { sent: 0, skipped: pollLines } });
  }, 60_000);

  it('the raw-poll log is on Kafka once, as the KafkaBus publishes polls', async () => {
    const messages = await collect(testKafka(), topic, (key, value, headers) => ({ key, poll: JSON.parse(value) as { carrier: string; awb: string }, mode: headers.mode }),
      (items) => items.length >= pollLines, 30_000);
    expect(messages).toHaveLength(pollLines);
    expect(messages.every((m) => m.key === `${m.poll.carrier}:${m.poll.awb}` && m.mode === 'test')).toBe(true);
  }, 60_000);

  it('the API on that Redis answers every key with the same counts, the watch, the endpoint, the payment, the analysis and the replay', async () => {
    moved = await startApiHarness({ store, namespace, paymentSandbox: gateway });
    // A minute on (the renewal's period starts just after the payment), the same UTC day.
    moved.clock.advance(60_000);
    for (const k of keys) {
      const usage = await moved.usage(k.key);
      expect({ prefix: usage.key_prefix, used: usage.period.lookups_used }).toEqual({ prefix: k.prefix, used: k.lookups });
      const lookup = await moved.track(k.key, 'delhivery', awbFor('delhivery', 2));
      expect(lookup.statusCode, `${k.prefix}: ${lookup.body}`).toBe(200);
      expect((await moved.usage(k.key)).period.lookups_used).toBe(k.lookups + 1);
    }
    const watches = (await call(moved, growthKey, 'GET', '/v1/trackings')).json() as { watches: { awb: string; status: string }[] };
    expect(watches.watches).toMatchObject([{ awb: awbFor('delhivery', 25), status: 'active' }]);
    // The endpoint signs with the secret it was given before the move.
    expect((await call(moved, growthKey, 'POST', `/v1/webhooks/${endpointId}/test`)).statusCode).toBe(202);
    await moved.runtime.push.dispatcher.drain();
    await receiver.waitFor(() => receiver.accepted().some((d) => (d.body as { type: string }).type === 'webhook.test'));
    expect(receiver.accepted().find((d) => (d.body as { type: string }).type === 'webhook.test')!.verifiedWith).toEqual([0]);
    // The payment was applied once: a redelivery is a duplicate.
    expect(await (await deliver(await moved.listen(), paymentBody, paymentSignature)).json()).toEqual({ received: true, outcome: 'duplicate' });
    expect((await moved.admin('GET', `/admin/payments?key=${keys[0]!.prefix}`)).json()).toMatchObject({ payments: [{ id: 'pay_move00000001', applied: true }] });
    expect((await call(moved, growthKey, 'GET', `/v1/analyses/${analysisId}`)).json()).toEqual(analysisReport);
    const replay = await call(moved, growthKey, 'POST', '/v1/track/batch', batchBody, { 'idempotency-key': idempotencyKey });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(batchAnswer);
  }, 60_000);

  it('refuses a Redis that holds other keys without --force (the CLI: exit 1, the reason)', async () => {
    const other = await startApiHarness({ store });
    try {
      await other.createKey();
      const err: string[] = [];
      const code = await runCli(['store', 'move', '--namespace', other.namespace, '--topic', topic], {
        env: { DATA_DIR: copy, REDIS_URL: redisUrl, KAFKA_BROKERS: TEST_BROKERS }, stdout: () => {}, stderr: (text) => err.push(text),
      });
      expect(code).toBe(1);
      expect(err.join('')).toMatch(/Redis already holds keys under test:.*--force/);
    } finally {
      await other.close();
    }
  }, 60_000);
});
