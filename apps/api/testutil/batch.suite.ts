/**
 * POST /v1/track/batch on both access stores (embedded, and the real Redis): items in input order,
 * each metered as a single lookup, the quota boundary inside a batch, exact metering of concurrent
 * batches, the burst, shared polls, and Idempotency-Key across a restart and two API instances.
 * Run on the embedded store by batch.test.ts and on one Redis and the Redis Cluster by batch.services.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteUnder } from '../../../lib/access/testutil/stores.ts';
import { connectRedis } from '../../../lib/redis/index.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../../../lib/config/index.ts';
import { startSandbox, type RunningSandbox } from '../../../lib/sandbox/server.ts';
import { TrackingRecordSchema, type TrackingRecord } from '../../../lib/schemas/index.ts';
import { buildApp } from '../app.ts';
import { createApiRuntime, type ApiRuntime } from '../context/runtime.ts';
import {
  ADMIN_TOKEN, TestClock, awbFor, expectError, expectRecord, redisUrlOf, startApiHarness,
  type ApiHarness, type CreateKeyBody, type StoreKind,
} from './harness.ts';

const ROOMY: Partial<CreateKeyBody> = { burst_per_second: 1000, daily_quota: 10_000, lookups_limit: 100_000 };

interface Item { carrier?: string; awb: string }
type Result =
  | { index: number; status: 200; tracking: TrackingRecord }
  | { index: number; status: 400 | 404 | 429 | 502; error: { code: string; message: string } };

function batch(app: FastifyInstance, key: string | null, body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST', url: '/v1/track/batch',
    headers: { ...(key === null ? {} : { 'x-api-key': key }), 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function results(res: LightMyRequestResponse): Result[] {
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { results: Result[] };
  expect(Object.keys(body)).toEqual(['results']);
  body.results.forEach((r, i) => {
    expect(r.index).toBe(i);
    if (r.status === 200) {
      const parsed = TrackingRecordSchema.safeParse(r.tracking);
      expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
      expect(Object.keys(r)).toEqual(['index', 'status', 'tracking']);
    } else {
      expect(Object.keys(r)).toEqual(['index', 'status', 'error']);
      expect(r.error.message.length).toBeGreaterThan(0);
    }
  });
  return body.results;
}

const summary = (rs: Result[]) => rs.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.error.code}`));

export function batchSuite(store: StoreKind): void {
  describe(`POST /v1/track/batch, ${store} store`, () => {
  let h: ApiHarness;
  const used = async (key: string) => (await h.usage(key)).period.lookups_used;
  beforeAll(async () => { h = await startApiHarness({ store }); });
  afterAll(() => h.close());

  it('answers good, not-found, invalid, carrier-down and detected items in input order, metering each as a single lookup', async () => {
    const { key } = await h.createKey(ROOMY);
    const items: Item[] = [
      { carrier: 'delhivery', awb: awbFor('delhivery', 2) },
      { carrier: 'delhivery', awb: awbFor('delhivery', 0) },
      { carrier: 'delhivery', awb: 'ab' },
      { carrier: 'fedex', awb: awbFor('delhivery', 2) },
      { carrier: 'shadowfax', awb: awbFor('shadowfax', 17) },
      { awb: '12345670104' },
      { awb: 'HELLO-WORLD' },
      { carrier: 'bd', awb: ` ${awbFor('bluedart', 3)} ` },
    ];
    const res = await batch(h.app, key, { items });
    const rs = results(res);
    expect(summary(rs)).toEqual([
      200, '404 shipment_not_found', '400 invalid_awb', '400 unsupported_carrier', '502 upstream_error', 200, '400 carrier_not_detected', 200,
    ]);
    const [good, , , , , detected, , alias] = rs as Extract<Result, { status: 200 }>[];
    expect(good!.tracking).toMatchObject({ carrier: 'delhivery', awb: awbFor('delhivery', 2) });
    expect(detected!.tracking).toMatchObject({ carrier: 'bluedart', awb: '12345670104', status: 'delivered' });
    expect(alias!.tracking).toMatchObject({ carrier: 'bluedart', status: 'out_for_delivery' });
    // 200, 404, 200, 200 consume; 400 and 502 do not.
    expect(await used(key)).toBe(4);
    expect(res.headers['x-lookups-remaining']).toBe(String(100_000 - 4));
    expect(res.headers['ratelimit-limit']).toBe('1000');
  });

  it('refuses the whole batch as a single call would: no key, a bad key, an ended plan, a malformed body', async () => {
    const { key } = await h.createKey(ROOMY);
    const items = [{ carrier: 'delhivery', awb: awbFor('delhivery', 2) }];
    expectError(await batch(h.app, null, { items }), 401, 'missing_api_key');
    expectError(await batch(h.app, 'trk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', { items }), 401, 'invalid_api_key');
    // The key is checked before the body.
    expectError(await batch(h.app, 'trk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '{"items": ['), 401, 'invalid_api_key');
    const ended = await h.createKey({ period_start: h.clock.iso(-31 * 86_400_000), period_end: h.clock.iso(-86_400_000) });
    expectError(await batch(h.app, ended.key, { items }), 402, 'payment_required');
    for (const body of ['{"items": [', {}, { items: [] }, { items: 'x' }, { items: [1] }, { items: Array.from({ length: 101 }, () => items[0]) }, []]) {
      expectError(await batch(h.app, key, body), 400, 'bad_request');
    }
    expect(await used(key)).toBe(0);
    const other = await h.app.inject({ method: 'GET', url: '/v1/track/batch', headers: { 'x-api-key': key } });
    expectError(other, 405, 'method_not_allowed');
  });

  it('serves exactly the 20 lookups left of a 50-item batch and refuses the rest with plan_quota_exceeded', async () => {
    const { key } = await h.createKey({ ...ROOMY, lookups_limit: 30 });
    for (let i = 0; i < 10; i++) expectRecord(await h.track(key, 'delhivery', awbFor('delhivery', 2, i)));
    const items = Array.from({ length: 50 }, (_, i) => ({ carrier: 'delhivery', awb: awbFor('delhivery', i % 2 === 0 ? 2 : 0, 10 + i) }));
    const rs = results(await batch(h.app, key, { items }));
    expect(rs.slice(0, 20).every((r) => r.status === 200 || r.status === 404)).toBe(true);
    expect(summary(rs.slice(20))).toEqual(Array(30).fill('429 plan_quota_exceeded'));
    expect(await used(key)).toBe(30);
  });

  it('names the daily quota for the items past it', async () => {
    const { key } = await h.createKey({ ...ROOMY, daily_quota: 3 });
    const items = Array.from({ length: 5 }, () => ({ carrier: 'delhivery', awb: awbFor('delhivery', 2) }));
    expect(summary(results(await batch(h.app, key, { items })))).toEqual([200, 200, 200, '429 daily_quota_exceeded', '429 daily_quota_exceeded']);
  });

  it('serves exactly 50 items in total to 300 concurrent batches of 10 against 50 remaining', async () => {
    const warm = await h.createKey(ROOMY);
    const awbs = Array.from({ length: 10 }, (_, i) => awbFor('delhivery', 2, 30 + i));
    results(await batch(h.app, warm.key, { items: awbs.map((awb) => ({ carrier: 'delhivery', awb })) }));
    const { key } = await h.createKey({ ...ROOMY, lookups_limit: 50 });
    const answers = await Promise.all(Array.from({ length: 300 }, () => batch(h.app, key, { items: awbs.map((awb) => ({ carrier: 'delhivery', awb })) })));
    const all = answers.flatMap(results);
    expect(all.filter((r) => r.status === 200)).toHaveLength(50);
    expect(all.filter((r) => r.status === 429)).toHaveLength(2950);
    expect(await used(key)).toBe(50);
  });

  it('counts a batch as one request for the burst limit, refusing a batch past it whole', async () => {
    const { key } = await h.createKey({ ...ROOMY, burst_per_second: 2 });
    const items = Array.from({ length: 10 }, () => ({ carrier: 'delhivery', awb: awbFor('delhivery', 2) }));
    results(await batch(h.app, key, { items }));
    results(await batch(h.app, key, { items }));
    const third = await batch(h.app, key, { items });
    expectError(third, 429, 'rate_limit_exceeded');
    expect(third.headers['retry-after']).toBe('1');
    expect(await used(key)).toBe(20);
    h.clock.advance(1000);
    results(await batch(h.app, key, { items }));
  });

  it('polls the carrier once for identical items, each still metered', async () => {
    const { key } = await h.createKey(ROOMY);
    const awb = awbFor('xpressbees', 2, 77);
    const before = await h.carrierPolls('xpressbees');
    const rs = results(await batch(h.app, key, { items: Array.from({ length: 5 }, () => ({ carrier: 'xpressbees', awb })) }));
    expect(summary(rs)).toEqual([200, 200, 200, 200, 200]);
    expect(await h.carrierPolls('xpressbees')).toBe(before + 1);
    expect(await used(key)).toBe(5);
  });

  it('replays an Idempotency-Key answer without consuming, refuses it with another body (422)', async () => {
    const { key } = await h.createKey(ROOMY);
    const body = { items: [{ carrier: 'delhivery', awb: awbFor('delhivery', 22, 5) }, { awb: awbFor('delhivery', 0, 5) }] };
    const idem = { 'idempotency-key': `order-sync-${randomBytes(4).toString('hex')}` };
    const first = await batch(h.app, key, body, idem);
    results(first);
    expect(await used(key)).toBe(2);
    h.clock.advance(60_000);
    // Scenario 22 changes on every poll: only a replay can give the same body.
    const again = await batch(h.app, key, { items: [...body.items].map((i) => ({ ...i })) }, idem);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await used(key)).toBe(2);
    const changed = await batch(h.app, key, { items: body.items.slice(0, 1) }, idem);
    expectError(changed, 422, 'idempotency_key_reused');
    // Another key's Idempotency-Key space is its own.
    const other = await h.createKey(ROOMY);
    results(await batch(h.app, other.key, { items: body.items.slice(0, 1) }, idem));
    expectError(await batch(h.app, key, body, { 'idempotency-key': 'x'.repeat(256) }), 400, 'bad_request');
    expect(await used(key)).toBe(2);
  });

  it('runs concurrent requests with one Idempotency-Key once: the others wait and get the same answer', async () => {
    const { key } = await h.createKey(ROOMY);
    const body = { items: Array.from({ length: 5 }, (_, i) => ({ carrier: 'ekart', awb: awbFor('ekart', 2, 40 + i) })) };
    const idem = { 'idempotency-key': `retry-storm-${store}` };
    const answers = await Promise.all(Array.from({ length: 4 }, () => batch(h.app, key, body, idem)));
    for (const answer of answers) expect(answer.body).toBe(answers[0]!.body);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(3);
    expect(await used(key)).toBe(5);
  });
  });
}

/** A second API process over the same data: the same DATA_DIR or the same Redis namespace. */
interface Instance {
  app: FastifyInstance;
  runtime: ApiRuntime;
  close(): Promise<void>;
}

async function openInstance(store: StoreKind, dataDir: string, namespace: string, sandbox: RunningSandbox, clock: TestClock): Promise<Instance> {
  const env = loadEnv({
    DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent', CONFIG_DIR: DEFAULT_CONFIG_DIR,
    ...(store === 'embedded' ? {} : { REDIS_URL: (await redisUrlOf(store))! }),
  });
  const runtime = await createApiRuntime(env, { sandboxUrl: sandbox.url, liveTarget: 'sandbox', clock: clock.now, redisNamespace: namespace });
  const app = await buildApp(runtime.deps);
  return { app, runtime, async close() { await app.close(); await runtime.close(); } };
}

export function idempotencySuite(store: StoreKind): void {
  describe(`Idempotency-Key across restarts and instances, ${store} store`, () => {
  let sandbox: RunningSandbox;
  let dataDir: string;
  const namespace = `test:${randomBytes(6).toString('hex')}:api:`;
  const clock = new TestClock();
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: '127.0.0.1', clock: clock.now });
    dataDir = await mkdtemp(join(tmpdir(), 'batch-idem-'));
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(dataDir, { recursive: true, force: true });
    if (store !== 'embedded') {
      const redis = connectRedis((await redisUrlOf(store))!);
      await deleteUnder(redis, namespace);
      await redis.quit();
    }
  });

  it('replays the first answer after a restart and, with Redis, from another instance, consuming nothing', async () => {
    const a = await openInstance(store, dataDir, namespace, sandbox, clock);
    const created = await a.app.inject({ method: 'POST', url: '/admin/keys', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { plan: 'starter', mode: 'test', email: 'sync@example.com', ...ROOMY } });
    const { key } = created.json() as { key: string };
    const body = { items: [{ carrier: 'delhivery', awb: awbFor('delhivery', 22, 6) }, { awb: awbFor('ekart', 2, 6) }] };
    const idem = { 'idempotency-key': 'nightly-sync-2026-11-19' };
    const first = await batch(a.app, key, body, idem);
    results(first);
    const usedOn = async (app: FastifyInstance) => ((await app.inject({ method: 'GET', url: '/v1/usage', headers: { 'x-api-key': key } })).json() as { period: { lookups_used: number } }).period.lookups_used;
    expect(await usedOn(a.app)).toBe(2);
    clock.advance(120_000);

    if (store !== 'embedded') {
      // Two API instances on one Redis, both up.
      const b = await openInstance(store, dataDir, namespace, sandbox, clock);
      const fromB = await batch(b.app, key, body, idem);
      expect(fromB.body).toBe(first.body);
      expectError(await batch(b.app, key, { items: body.items.slice(1) }, idem), 422, 'idempotency_key_reused');
      await b.close();
    }
    await a.close();
    const restarted = await openInstance(store, dataDir, namespace, sandbox, clock);
    const replay = await batch(restarted.app, key, body, idem);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await usedOn(restarted.app)).toBe(2);
    // After 24 hours the key is free again: the batch runs (and consumes) anew.
    clock.advance(24 * 3_600_000);
    const later = await batch(restarted.app, key, body, idem);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(await usedOn(restarted.app)).toBe(4);
    await restarted.close();
  });
  });
}
