import { LRUCache } from 'lru-cache';
import type { CachedLookup } from './policy.ts';
import type { TrackingCache } from './types.ts';

/** In-process cache, bounded by entry count so memory cannot grow without limit. */
export function createMemoryCache(maxEntries = 50_000): TrackingCache {
  const lru = new LRUCache<string, CachedLookup>({ max: maxEntries, ttlAutopurge: false });
  return {
    async get(key) {
      return lru.get(key) ?? null;
    },
    async set(key, entry, ttlMs) {
      lru.set(key, entry, ttlMs === null ? {} : { ttl: ttlMs });
    },
    async close() {
      lru.clear();
    },
  };
}
