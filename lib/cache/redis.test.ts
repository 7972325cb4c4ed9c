/** The Redis cache against the real Redis (npm run services -- up). */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deleteUnder, testNamespace, testRedisUrl } from '../access/testing.ts';
import type { CachedLookup } from './policy.ts';
import { createRedisCache, encodeEntry } from './redis.ts';

let redis: Redis;
let ns: string;
beforeAll(async () => {
  redis = new Redis(await testRedisUrl());
  ns = testNamespace();
});
afterAll(async () => {
  await deleteUnder(redis, ns);
  await redis.quit();
});

const notFound = (polledAtMs: number): CachedLookup => ({ shipment: null, polledAtMs });

describe('redis cache', () => {
  it('stores an entry with its TTL and reads it back', async () => {
    const cache = createRedisCache(redis, ns);
    expect(await cache.get('test:delhivery:A1')).toBeNull();
    await cache.set('test:delhivery:A1', notFound(1), 60_000);
    expect(await cache.get('test:delhivery:A1')).toEqual(notFound(1));
    const ttl = await redis.pttl(`${ns}test:delhivery:A1`);
    expect(ttl).toBeGreaterThan(50_000);
    await cache.set('test:delhivery:A2', notFound(2), null);
    expect(await redis.pttl(`${ns}test:delhivery:A2`)).toBe(-1);
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
    await redis.set(`${ns}test:ekart:C1`, '{"shipment":null,"polledAtMs":1}');
    expect(await cache.get('test:ekart:C1')).toBeNull();
    await redis.set(`${ns}test:ekart:C2`, encodeEntry(notFound(3)));
    expect(await cache.get('test:ekart:C2')).toEqual(notFound(3));
  });

  it('reads the entries of one turn in one call, each entry once, and again in a later turn', async () => {
    const cache = createRedisCache(redis, ns);
    await cache.set('test:xpressbees:D1', notFound(4), null);
    const reads = vi.spyOn(redis as unknown as { trackingCacheRead: (...args: (string | number)[]) => Promise<(string | null)[]> }, 'trackingCacheRead');
    try {
      const together = await Promise.all([...Array(20).fill('test:xpressbees:D1'), 'test:xpressbees:D2'].map((key) => cache.get(key)));
      expect(together.slice(0, 20)).toEqual(Array(20).fill(notFound(4)));
      expect(together[20]).toBeNull();
      expect(reads).toHaveBeenCalledTimes(1);
      expect(reads.mock.calls[0]!.slice(0, 3)).toEqual([2, `${ns}test:xpressbees:D1`, `${ns}test:xpressbees:D2`]);
      await cache.set('test:xpressbees:D1', notFound(5), null);
      expect(await cache.get('test:xpressbees:D1')).toEqual(notFound(5));
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      reads.mockRestore();
    }
  });
});
