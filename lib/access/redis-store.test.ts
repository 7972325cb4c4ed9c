/** What only the Redis store has: its key layout, expiries and many processes sharing one Redis. */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashKey } from './key-format.ts';
import { RedisAccessStore } from './redis-store.ts';
import { deleteUnder, keysUnder, plans, testNamespace, testRedisUrl } from './testing.ts';
import { msToNextUtcMidnight } from './time.ts';

let redis: Redis;
let ns: string;
let store: RedisAccessStore;
beforeAll(async () => {
  redis = new Redis(await testRedisUrl());
});
afterAll(async () => {
  await redis.quit();
});
beforeEach(() => {
  ns = testNamespace();
  store = new RedisAccessStore({ plans, redis, namespace: ns });
});
afterEach(async () => {
  await store.close();
  await deleteUnder(redis, ns);
});

describe('redis access store layout', () => {
  it('keeps the record under its hash, indexes and three counters with their expiries', async () => {
    const now = new Date();
    const { key, record } = await store.issueTrial({ email: 'Asha@Example.in', mode: 'live' }, now);
    const granted = await store.consume(record, now);
    expect(granted.ok).toBe(true);
    const start = Date.parse(record.period_start);
    const day = now.toISOString().slice(0, 10);
    const second = Math.floor(now.getTime() / 1000);
    expect(await keysUnder(redis, ns)).toEqual([
      `${ns}burst:${record.prefix}:${second}`,
      `${ns}daily:${record.prefix}:${start}:${day}`,
      `${ns}key:${hashKey(key)}`,
      `${ns}keys`,
      `${ns}period:${record.prefix}:${start}`,
      `${ns}prefix:${record.prefix}`,
      `${ns}trial:asha@example.in`,
    ].sort());
    expect(await redis.hgetall(`${ns}key:${hashKey(key)}`)).toMatchObject({ prefix: record.prefix, status: 'active', plan: 'trial', lookups_limit: '100' });
    expect(await redis.get(`${ns}prefix:${record.prefix}`)).toBe(hashKey(key));
    expect(await redis.get(`${ns}trial:asha@example.in`)).toBe(record.prefix);

    const burstTtl = await redis.pttl(`${ns}burst:${record.prefix}:${second}`);
    expect(burstTtl).toBeGreaterThan(0);
    expect(burstTtl).toBeLessThanOrEqual(2000);
    const dailyTtl = await redis.pttl(`${ns}daily:${record.prefix}:${start}:${day}`);
    expect(Math.abs(dailyTtl - (msToNextUtcMidnight(now) + 3_600_000))).toBeLessThan(5000);
    expect(await redis.pttl(`${ns}period:${record.prefix}:${start}`)).toBe(-1);
    expect(await redis.pttl(`${ns}key:${hashKey(key)}`)).toBe(-1);
  });

  it('deletes the old period counter on renewal', async () => {
    const now = new Date('2026-11-21T10:00:00.000Z');
    const { record } = await store.createKey({ plan: 'starter', mode: 'live', email: 'a@example.in' }, now);
    await store.consume(record, now);
    const oldCounter = `${ns}period:${record.prefix}:${now.getTime()}`;
    expect(await redis.get(oldCounter)).toBe('1');
    await store.renew(record.prefix, undefined, new Date(now.getTime() + 60_000));
    expect(await redis.exists(oldCounter)).toBe(0);
  });

  it('leaves a connection it was given open when closed', async () => {
    await store.close();
    expect(await redis.ping()).toBe('PONG');
  });
});

describe('many API processes on one Redis', () => {
  it('serve exactly the 50 lookups left to 500 parallel requests over 5 connections', async () => {
    const url = await testRedisUrl();
    const instances = Array.from({ length: 5 }, () => new RedisAccessStore({ plans, redis: url, namespace: ns }));
    try {
      const now = new Date('2026-11-21T10:00:00.000Z');
      const { record } = await store.createKey({ plan: 'business', mode: 'live', email: 'a@example.in', lookups_limit: 50, daily_quota: 10_000, burst_per_second: 10_000 }, now);
      const results = await Promise.all(Array.from({ length: 500 }, (_, i) => instances[i % 5]!.consume(record, now)));
      expect(results.filter((r) => r.ok)).toHaveLength(50);
      expect(results.filter((r) => !r.ok && r.code === 'plan_quota_exceeded')).toHaveLength(450);
      expect(await store.usage(record.prefix, now)).toEqual({ lookupsUsed: 50, dailyUsed: 50 });
    } finally {
      await Promise.all(instances.map((s) => s.close()));
    }
  });

  it('see a suspension made by another process at once', async () => {
    const other = new RedisAccessStore({ plans, redis, namespace: ns });
    const now = new Date('2026-11-21T10:00:00.000Z');
    const { record } = await store.createKey({ plan: 'starter', mode: 'live', email: 'a@example.in' }, now);
    await other.setStatus(record.prefix, 'suspended');
    expect(await store.consume(record, now)).toEqual({ ok: false, code: 'invalid_api_key' });
  });
});
