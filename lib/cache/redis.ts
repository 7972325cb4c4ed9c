import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { CachedLookup } from './policy.ts';
import type { TrackingCache } from './types.ts';

/** Decoded entries remembered per process (see below); a few MiB at most. */
const DECODED_ENTRIES = 1_000;

/**
 * Redis cache: one JSON string per lookup key, with the policy's TTL (none for terminal records).
 *
 * Every `get` reads Redis, so all API processes see the same entry. Parsing the ~3 KB JSON was the
 * costliest step of a cached lookup, so the last decoded value of recently read keys is kept with
 * the exact text it came from and reused while Redis still returns that very text.
 */
export function createRedisCache(redis: Redis, prefix = 'trk:cache:'): TrackingCache {
  const decoded = new LRUCache<string, { json: string; entry: CachedLookup }>({ max: DECODED_ENTRIES });
  return {
    async get(key) {
      const json = await redis.get(prefix + key);
      if (json === null) return null;
      const known = decoded.get(key);
      if (known?.json === json) return known.entry;
      const entry = JSON.parse(json) as CachedLookup;
      decoded.set(key, { json, entry });
      return entry;
    },
    async set(key, entry, ttlMs) {
      const json = JSON.stringify(entry);
      if (ttlMs === null) await redis.set(prefix + key, json);
      else await redis.set(prefix + key, json, 'PX', ttlMs);
    },
    async close() {
      decoded.clear();
      // The connection belongs to the caller, which may share it with other stores.
    },
  };
}
