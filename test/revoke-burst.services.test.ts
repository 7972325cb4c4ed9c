/**
 * Revoking a key during a burst of deliveries, on the Redis dispatcher path with two dispatchers
 * (the API's own and a second one on another connection): nothing is sent for the revoked key
 * after the revoke is answered, except attempts already on the wire at that instant.
 *
 * How many can those be: a dispatcher asks the key's standing from Redis right before each send,
 * so an attempt that asked before the revoke was written may still go out. Each dispatcher has at
 * most `perEndpoint` attempts in flight per endpoint (16 by default), so with E endpoints of the key
 * at most E × the sum of the dispatchers' perEndpoint: here 1 × (16 for the API's own + 4 for the
 * second) = 20. (Each sender also opens at most 8 connections per endpoint, so on the wire at once
 * there are at most 8 + 4 = 12.)
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../apps/api/testutil/harness.ts';
import { RedisAccessStore, standingFromStore } from '../lib/access/index.ts';
import { testRedisUrl } from '../lib/access/testutil/stores.ts';
import { loadProduct } from '../lib/product/index.ts';
import { DEFAULT_CONFIG_DIR } from '../lib/config/index.ts';
import { RedisKv } from '../lib/kv/index.ts';
import { Dispatcher, EndpointStore, type WebhookEvent } from '../lib/push/index.ts';
import { WebhookSender } from '../lib/push/sender.ts';
import { LOOPBACK_TARGETS, startReceiver, type Receiver } from '../lib/push/testutil/receiver.ts';

const PER_ENDPOINT = 4;
/** The Dispatcher's default, which the API's own dispatcher uses. */
const API_PER_ENDPOINT = 16;
const EVENTS = 600;

let api: ApiHarness;
let receiver: Receiver;
let second: Dispatcher;
let secondSender: WebhookSender;
let redis: Redis;

beforeAll(async () => {
  receiver = await startReceiver();
  // Every answer takes a moment, so the burst is still going when the key is revoked.
  receiver.respond(() => ({ status: 204, delayMs: 50 }));
  api = await startApiHarness({ store: 'redis' });
  redis = new Redis(await testRedisUrl());
  const kv = new RedisKv(redis, `${api.namespace}push:`);
  const access = new RedisAccessStore({ plans: loadProduct(DEFAULT_CONFIG_DIR).config.plans, redis, namespace: `${api.namespace}access:` });
  secondSender = new WebhookSender({ allowedTargets: LOOPBACK_TARGETS });
  second = new Dispatcher({ kv, endpoints: new EndpointStore(kv), sender: secondSender, standing: standingFromStore(access), perEndpoint: PER_ENDPOINT, clock: api.clock.now, idleMs: 20 });
});

afterAll(async () => {
  await second?.stop();
  await secondSender?.close();
  await api?.close();
  await receiver?.close();
  redis?.disconnect();
});

it('revoked during a burst on two dispatchers: nothing sent after the answer but attempts already on the wire', async () => {
  const created = await api.createKey({ plan: 'business', mode: 'test', burst_per_second: 1000 });
  const res = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': created.key }, payload: { url: receiver.url } });
  expect(res.statusCode, res.body).toBe(201);
  receiver.setSecrets([(res.json() as { secret: string }).secret]);
  second.start();

  // One event per shipment: every queue is its own, so both dispatchers send in parallel.
  const now = api.clock.now();
  const events: WebhookEvent[] = Array.from({ length: EVENTS }, (_, i) => ({
    schema: 'webhook_event.v1', id: `evt_burst_${i}`, key_prefix: created.key_prefix, mode: 'test', type: 'tracking.updated',
    carrier: 'delhivery', awb: `90000000${String(i).padStart(4, '0')}`, sequence: 1, created_at: new Date(now).toISOString(),
    body: JSON.stringify({ type: 'tracking.updated', timestamp: new Date(now).toISOString(), data: { n: i } }),
  }));
  await api.runtime.push.events.publish(events);
  await receiver.waitFor(() => receiver.deliveries.length >= 40, 20_000);

  const revoke = await api.admin('POST', `/admin/keys/${created.key_prefix}/revoke`);
  expect(revoke.statusCode).toBe(200);
  const answeredAt = Date.now();
  const before = receiver.deliveries.filter((d) => d.receivedAt < answeredAt).length;

  // Long enough for a whole further burst: both dispatchers keep claiming (their loops run).
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const after = receiver.deliveries.filter((d) => d.receivedAt >= answeredAt).length;
  expect(before).toBeLessThan(EVENTS);
  expect(after, `${after} deliveries arrived after the revoke was answered (${before} before)`).toBeLessThanOrEqual(API_PER_ENDPOINT + PER_ENDPOINT);
  expect(before + after).toBeLessThan(EVENTS);
  // And nothing later either: the queues are gone.
  const settled = receiver.deliveries.length;
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(receiver.deliveries.length).toBe(settled);
});
