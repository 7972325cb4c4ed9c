/**
 * What only the Redis store has: its key layout, expiries and many processes sharing one Redis,
 * on one server and on the 3-master cluster alike; and the upgrade of the previous layout.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../redis/index.ts';
import { hashKey } from './key-format.ts';
import { ACCESS_LAYOUT_VERSION, upgradeAccessLayout } from './redis-layout.ts';
import { RedisAccessStore } from './redis-store.ts';
import { deleteUnder, keysUnder, plans, testNamespace, testRedisClusterUrl, testRedisUrl } from './testutil/stores.ts';

describe.each([
  { target: 'one Redis', urlOf: testRedisUrl },
  { target: 'a Redis Cluster', urlOf: testRedisClusterUrl },
])('on $target', ({ urlOf }) => {
  let redis: RedisClient;
  let ns: string;
  let store: RedisAccessStore;
  beforeAll(async () => {
    redis = connectRedis(await urlOf());
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
    it('keeps the record under its hash, indexes and one usage hash with each count\'s window', async () => {
      const now = new Date();
      const { key, record } = await store.issueTrial({ email: 'Asha@Example.in', mode: 'live' }, now);
      const granted = await store.consume(record, now);
      expect(granted.ok).toBe(true);
      const hash = hashKey(key);
      expect(await keysUnder(redis, ns)).toEqual([
        `${ns}key:{${hash}}`,
        `${ns}keys`,
        `${ns}layout`,
        `${ns}prefix:${record.prefix}`,
        `${ns}trial:asha@example.in`,
        `${ns}usage:{${hash}}`,
      ].sort());
      expect(await redis.hgetall(`${ns}key:{${hash}}`)).toMatchObject({ prefix: record.prefix, status: 'active', plan: 'trial', lookups_limit: '100' });
      expect(await redis.get(`${ns}prefix:${record.prefix}`)).toBe(hash);
      expect(await redis.get(`${ns}trial:asha@example.in`)).toBe(record.prefix);
      expect(await redis.hgetall(`${ns}usage:{${hash}}`)).toEqual({
        period_start: record.period_start, period_used: '1',
        day: now.toISOString().slice(0, 10), day_used: '1',
        burst_second: String(Math.floor(now.getTime() / 1000)), burst_used: '1',
      });
      // Nothing expires: a count of an earlier window simply reads as zero.
      expect(await redis.pttl(`${ns}usage:{${hash}}`)).toBe(-1);
      expect(await redis.pttl(`${ns}key:{${hash}}`)).toBe(-1);
    });

    it('reads counts of an earlier day or second as zero, and deletes the counts on renewal', async () => {
      const now = new Date('2026-11-21T10:00:00.000Z');
      const { key, record } = await store.createKey({ plan: 'starter', mode: 'live', email: 'a@example.in', burst_per_second: 1 }, now);
      expect((await store.consume(record, now)).ok).toBe(true);
      expect(await store.consume(record, now)).toMatchObject({ ok: false, code: 'rate_limit_exceeded' });
      const nextDay = new Date('2026-11-22T00:00:00.500Z');
      expect(await store.consume(record, nextDay)).toMatchObject({ ok: true, remaining: { burst: 0, daily: record.daily_quota - 1, period: record.lookups_limit - 2 } });
      expect(await store.usage(record.prefix, nextDay)).toEqual({ lookupsUsed: 2, dailyUsed: 1 });

      const usageKey = `${ns}usage:{${hashKey(key)}}`;
      expect(await redis.hget(usageKey, 'period_used')).toBe('2');
      await store.renew(record.prefix, undefined, new Date(nextDay.getTime() + 60_000));
      expect(await redis.exists(usageKey)).toBe(0);
      expect(await store.usage(record.prefix, nextDay)).toEqual({ lookupsUsed: 0, dailyUsed: 0 });
    });

    it('leaves a connection it was given open when closed', async () => {
      await store.close();
      expect(await redis.ping()).toBe('PONG');
    });
  });

  describe('many API processes on one Redis', () => {
    it('serve exactly the 50 lookups left to 500 parallel requests over 5 connections', async () => {
      const url = await urlOf();
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
});

describe('the previous layout (one Redis)', () => {
  let redis: RedisClient;
  let ns: string;
  beforeEach(async () => {
    redis = connectRedis(await testRedisUrl());
    ns = testNamespace();
  });
  afterEach(async () => {
    await deleteUnder(redis, ns);
    await redis.quit();
  });

  it('is renamed to the tagged names at start, once, keeping each key and its counts', async () => {
    const store = new RedisAccessStore({ plans, redis, namespace: ns });
    const now = new Date('2026-11-21T10:00:00.000Z');
    const { key, record } = await store.createKey({ plan: 'starter', mode: 'live', email: 'a@example.in' }, now);
    for (let i = 0; i < 3; i++) expect((await store.consume(record, now)).ok).toBe(true);
    // What the previous release wrote: the same hashes under untagged names, no layout key.
    const hash = hashKey(key);
    await redis.rename(`${ns}key:{${hash}}`, `${ns}key:${hash}`);
    await redis.rename(`${ns}usage:{${hash}}`, `${ns}usage:${hash}`);
    await redis.del(`${ns}layout`);
    expect(await store.getByKey(key)).toBeNull();
    await store.close();

    // A store of this release (a restarted API) upgrades before its first command.
    const upgraded = new RedisAccessStore({ plans, redis, namespace: ns });
    expect(await upgraded.getByKey(key)).toEqual(record);
    expect(await redis.get(`${ns}layout`)).toBe(ACCESS_LAYOUT_VERSION);
    expect(await upgraded.usage(record.prefix, now)).toEqual({ lookupsUsed: 3, dailyUsed: 3 });
    expect(await upgraded.consume(record, now)).toMatchObject({ ok: true, remaining: { period: record.lookups_limit - 4 } });
    expect((await keysUnder(redis, ns)).filter((name) => !name.includes('{') && /(key|usage):/.test(name))).toEqual([]);
    // Done once: the next start reads the version and renames nothing.
    expect(await upgradeAccessLayout(redis, ns)).toEqual({ renamed: 0 });
    await upgraded.close();

    // Run by hand on a namespace still in the previous layout, it says how many it renamed.
    await redis.rename(`${ns}key:{${hash}}`, `${ns}key:${hash}`);
    await redis.del(`${ns}layout`);
    expect(await upgradeAccessLayout(redis, ns)).toEqual({ renamed: 1 });
  });
});
