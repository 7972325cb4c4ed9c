/** The Redis cache against the real Redis and the real 3-master Redis Cluster (npm run services -- up). */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testNamespace, testRedisUrl } from '../access/testutil/stores.ts';
import { connectRedis, isCluster, type RedisClient } from '../redis/index.ts';
import { deleteUnder, testRedisClusterUrl } from '../redis/testutil/cluster.ts';
import type { CachedLookup } from './policy.ts';
import { createRedisCache, encodeEntry, storedKey } from './redis.ts';

const notFound = (polledAtMs: number): CachedLookup => ({ shipment: null, polledAtMs });
type Spied = { trackingCacheRead: (...args: (string | number)[]) => Promise<(string | null)[]> };

describe.each([
  { name: 'one Redis', url: testRedisUrl },
  { name: 'Redis Cluster', url: testRedisClusterUrl },
])('redis cache on $name', ({ url }) => {
  let redis: RedisClient;
  let ns: string;
  beforeAll(async () => {
    redis = connectRedis(await url());
    ns = testNamespace();
  });
  afterAll(async () => {
    await deleteUnder(redis, ns);
    await redis.quit();
  });

  it('stores an entry with its TTL and reads it back', async () => {
    const cache = createRedisCache(redis, ns);
    expect(await cache.get('test:delhivery:A1')).toBeNull();
    await cache.set('test:delhivery:A1', notFound(1), 60_000);
    expect(await cache.get('test:delhivery:A1')).toEqual(notFound(1));
    const ttl = await redis.pttl(storedKey(ns, 'test:delhivery:A1'));
    expect(ttl).toBeGreaterThan(50_000);
    await cache.set('test:delhivery:A2', notFound(2), null);
    expect(await redis.pttl(storedKey(ns, 'test:delhivery:A2'))).toBe(-1);
  });

  it('reuses the decoded entry while unchanged, and sees a change made by another process at once', async () => {
    const mine = createRedisCache(redis, ns);
    const other = createRedisCache(redis, ns);
    await mine.set('test:dtdc:B1', notFound(1), null);
    const first = await mine.get('test:dtdc:B1');
    expect(await mine.get('test:dtdc:B1')).toBe(first);
    await other.set('test:dtdc:B1', notFound(2), null);
    expect(await mine.get('test:dtdc:B1')).toEqual(notFound(2));
  });

  it('counts a value it cannot read as a miss', async () => {
    const cache = createRedisCache(redis, ns);
    await redis.set(storedKey(ns, 'test:ekart:C1'), '{"shipment":null,"polledAtMs":1}');
    expect(await cache.get('test:ekart:C1')).toBeNull();
    await redis.set(storedKey(ns, 'test:ekart:C2'), encodeEntry(notFound(3)));
    expect(await cache.get('test:ekart:C2')).toEqual(notFound(3));
  });

  it('serves many turns of concurrent reads over auto-pipelined connections, as the apps connect', async () => {
    // Every turn reads another mix of buckets, so calls of many key counts share node pipelines.
    const piped = connectRedis(await url(), { enableAutoPipelining: true });
    try {
      const cache = createRedisCache(piped, ns);
      const keys = Array.from({ length: 300 }, (_, i) => `test:ekart:P${i}`);
      for (const [i, key] of keys.entries()) if (i % 3 === 0) await cache.set(key, notFound(i), null);
      for (let turn = 1; turn <= 30; turn++) {
        const picked = keys.filter((_, i) => (i * turn) % 7 < 1 + (turn % 6));
        const read = await Promise.all(picked.map((key) => cache.get(key)));
        expect(read).toEqual(picked.map((key) => (keys.indexOf(key) % 3 === 0 ? notFound(keys.indexOf(key)) : null)));
      }
    } finally {
      await piped.quit();
    }
  });

  it('reads the entries of one turn in as few calls as the slots allow, each entry once, and again in a later turn', async () => {
    const cache = createRedisCache(redis, ns);
    const keys = Array.from({ length: 40 }, (_, i) => `test:xpressbees:D${i}`);
    for (const [i, key] of keys.entries()) if (i % 2 === 0) await cache.set(key, notFound(i), null);
    const reads = vi.spyOn(redis as unknown as Spied, 'trackingCacheRead');
    try {
      const together = await Promise.all([...Array(20).fill(keys[0]), ...keys].map((key) => cache.get(key)));
      expect(together.slice(0, 20)).toEqual(Array(20).fill(notFound(0)));
      expect(together.slice(20)).toEqual(keys.map((_, i) => (i % 2 === 0 ? notFound(i) : null)));
      // Each entry read once in the turn, and every call's keys in one slot (on a cluster; one call on one Redis).
      const sent = reads.mock.calls.map((call) => call.slice(1, 1 + Number(call[0])) as string[]);
      expect(sent.flat().sort()).toEqual(keys.map((key) => storedKey(ns, key)).sort());
      if (isCluster(redis)) {
        for (const callKeys of sent) {
          const slots = new Set(await Promise.all(callKeys.map((key) => redis.cluster('KEYSLOT', key))));
          expect(slots.size).toBe(1);
        }
        expect(sent.length).toBeLessThan(keys.length);
      } else {
        expect(sent).toHaveLength(1);
      }
      reads.mockClear();
      await cache.set(keys[0]!, notFound(99), null);
      expect(await cache.get(keys[0]!)).toEqual(notFound(99));
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });
});
