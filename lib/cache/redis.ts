import { createHash } from 'node:crypto';
import DataLoader from 'dataloader';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { CachedLookup } from './policy.ts';
import type { TrackingCache } from './types.ts';

/** Decoded entries remembered per process (see below); a few MiB at most. */
const DECODED_ENTRIES = 1_000;
/** Hex characters of the content version that starts every stored value. */
const VERSION_LENGTH = 16;

/**
 * Reads an entry unless the caller holds it already. KEYS: 1 the entry. ARGV: 1 the version the
 * caller holds ('' for none). Returns nil (no entry), the version alone (unchanged) or the value.
 */
const CACHE_READ_LUA = `
local value = redis.call('GET', KEYS[1])
if not value then return false end
if ARGV[1] ~= '' and string.sub(value, 1, ${VERSION_LENGTH}) == ARGV[1] then return ARGV[1] end
return value
`;

type CacheRedis = Redis & { trackingCacheRead(key: string, knownVersion: string): Promise<string | null> };

/** A value as stored: the JSON's content version, then the JSON. */
export function encodeEntry(entry: CachedLookup): string {
  const json = JSON.stringify(entry);
  return createHash('sha1').update(json).digest('hex').slice(0, VERSION_LENGTH) + json;
}

/**
 * Redis cache: one value per lookup key, with the policy's TTL (none for terminal records).
 *
 * Every `get` asks Redis, so all API processes see the same entry. But parsing the ~3 KB record
 * (and receiving it) was the costliest part of a cached lookup, so each process keeps the entries
 * it decoded last with their content version, and Redis sends an entry only when its version is
 * not the one the caller holds. A value that cannot be read (another format) counts as a miss.
 *
 * Reads of one entry in one event-loop turn share one question: under load many lookups of one
 * consignment arrive together, and they are concurrent, so one read serves them all.
 */
export function createRedisCache(redis: Redis, prefix = 'trk:cache:'): TrackingCache {
  redis.defineCommand('trackingCacheRead', { numberOfKeys: 1, lua: CACHE_READ_LUA });
  const scripted = redis as CacheRedis;
  const decoded = new LRUCache<string, { version: string; entry: CachedLookup }>({ max: DECODED_ENTRIES });
  const readOne = async (key: string): Promise<CachedLookup | null> => {
    const known = decoded.get(key);
    const reply = await scripted.trackingCacheRead(prefix + key, known?.version ?? '');
    if (reply === null) return null;
    if (known && reply === known.version) return known.entry;
    let entry: CachedLookup;
    try {
      entry = JSON.parse(reply.slice(VERSION_LENGTH)) as CachedLookup;
    } catch {
      return null;
    }
    decoded.set(key, { version: reply.slice(0, VERSION_LENGTH), entry });
    return entry;
  };
  // The loader's memo holds only the reads of the turn not yet sent: it is emptied as they go out.
  const reads: DataLoader<string, CachedLookup | null> = new DataLoader((keys) => {
    reads.clearAll();
    return Promise.all(keys.map((key) => readOne(key).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))));
  }, { batchScheduleFn: (dispatch) => setImmediate(dispatch) });
  return {
    get: (key) => reads.load(key),
    async set(key, entry, ttlMs) {
      const value = encodeEntry(entry);
      if (ttlMs === null) await redis.set(prefix + key, value);
      else await redis.set(prefix + key, value, 'PX', ttlMs);
    },
    async close() {
      decoded.clear();
      // The connection belongs to the caller, which may share it with other stores.
    },
  };
}
