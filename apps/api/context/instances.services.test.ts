/**
 * Several API instances on one Redis (one server, or the 3-master Redis Cluster of `npm run services`):
 * metering stays exact across them. Two runtimes, each with its
 * own Redis connection, access store, per-turn batching and decoded-record cache (as two processes
 * behind a balancer have), on the same key namespace; 500 lookups fired at once over real HTTP,
 * alternating between the two, against 50 lookups left. Frozen clock, consignments cached before,
 * so no carrier is involved and all 500 fall in one burst window and one UTC day.
 */
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema } from '../../../lib/schemas/index.ts';
import { awbFor, expectRecord, startApiHarness, type ApiHarness } from '../testutil/harness.ts';

const PARALLEL = 500;
const FOUND = awbFor('delhivery', 2);
const NOT_FOUND = awbFor('delhivery', 0);

describe.each(['redis', 'redis-cluster'] as const)('two API instances on one Redis (%s)', (store) => {
  let first: ApiHarness;
  let second: ApiHarness;
  const bases: string[] = [];
  const agent = new Agent({ connections: 100, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });

  beforeAll(async () => {
    first = await startApiHarness({ store });
    second = await startApiHarness({ store, namespace: first.namespace });
    bases.push(await first.listen(), await second.listen());
    // Each instance caches both consignments (one shared cache entry each, in Redis).
    const warm = await first.createKey();
    for (const h of [first, second]) {
      expectRecord(await h.track(warm.key, 'delhivery', FOUND));
      expect((await h.track(warm.key, 'delhivery', NOT_FOUND)).statusCode).toBe(404);
    }
  });
  afterAll(async () => {
    await agent.close();
    await second?.close();
    await first?.close();
  });

  it('500 parallel lookups split across them against 50 left: exactly 50 answered 200/404, usage says 50 on both', async () => {
    const key = (await first.createKey({ lookups_limit: 50, burst_per_second: 10_000, daily_quota: 10_000 })).key;
    // The key was created through the first instance; the second knows it only from Redis.
    expect((await second.usage(key)).period).toMatchObject({ lookups_used: 0, lookups_remaining: 50 });
    await Promise.all(Array.from({ length: 100 }, async (_, i) => (await request(`${bases[i % 2]}/healthz`, { dispatcher: agent })).body.text()));

    const answers = await Promise.all(Array.from({ length: PARALLEL }, async (_, i) => {
      const base = bases[i % 2]!;
      const awb = Math.floor(i / 2) % 2 ? NOT_FOUND : FOUND;
      const res = await request(`${base}/v1/track/delhivery/${awb}`, { headers: { 'x-api-key': key }, dispatcher: agent });
      return { instance: i % 2, status: res.statusCode, body: await res.body.text() };
    }));

    const served = answers.filter((a) => a.status === 200 || a.status === 404);
    const refused = answers.filter((a) => a.status !== 200 && a.status !== 404);
    expect(served).toHaveLength(50);
    expect(refused).toHaveLength(PARALLEL - 50);
    for (const a of answers.filter((x) => x.status === 404)) expect(ErrorBodySchema.parse(JSON.parse(a.body)).error.code).toBe('shipment_not_found');
    expect(new Set(refused.map((a) => `${a.status} ${ErrorBodySchema.parse(JSON.parse(a.body)).error.code}`))).toEqual(new Set(['429 plan_quota_exceeded']));
    // Both instances took part in serving and refusing, so the count really was shared.
    expect(new Set(refused.map((a) => a.instance))).toEqual(new Set([0, 1]));

    for (const h of [first, second]) {
      expect((await h.usage(key)).period).toMatchObject({ lookups_used: 50, lookups_limit: 50, lookups_remaining: 0 });
    }
  });
});
