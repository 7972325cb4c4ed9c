import type { Redis } from 'ioredis';
import type { CachedLookup } from './policy.ts';
import type { TrackingCache } from './types.ts';

/** Redis cache: one JSON string per lookup key, with the policy's TTL (none for terminal records). */
export function createRedisCache(redis: Redis, prefix = 'trk:cache:'): TrackingCache {
  return {
    async get(key) {
      const json = await redis.get(prefix + key);
      return json === null ? null : (JSON.parse(json) as CachedLookup);
    },
    async set(key, entry, ttlMs) {
      const json = JSON.stringify(entry);
      if (ttlMs === null) await redis.set(prefix + key, json);
      else await redis.set(prefix + key, json, 'PX', ttlMs);
    },
    async close() {
      // The connection belongs to the caller, which may share it with other stores.
    },
  };
}
