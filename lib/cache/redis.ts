import { createHash } from 'node:crypto';
import DataLoader from 'dataloader';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { dispatchAtEndOfTurn } from '../batch/index.ts';
import type { CachedLookup } from './policy.ts';
import type { TrackingCache } from './types.ts';

/** Decoded entries remembered per process (see below); a few MiB at most. */
const DECODED_ENTRIES = 1_000;
/** Entries read by one script call at most (bounds the reply, ~3 KB per entry not held). */
const MAX_READS_PER_CALL = 200;
/** Hex characters of the content version that starts every stored value. */
const VERSION_LENGTH = 16;

/**
 * Reads entries unless the caller holds them already. KEYS: the entries. ARGV: per entry, the
 * version the caller holds ('' for none). Returns per entry: false (no entry: nil), the version
 * alone (unchanged) or the value.
 */
const CACHE_READ_LUA = `
local replies = {}
for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if not value then replies[i] = false
  elseif ARGV[i] ~= '' and string.sub(value, 1, ${VERSION_LENGTH}) == ARGV[i] then replies[i] = ARGV[i]
  else replies[i] = value end
end
return replies
`;

type CacheRedis = Redis & { trackingCacheRead(numKeys: number, ...keysThenVersions: string[]): Promise<(string | null)[]> };

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
 * The reads of one event-loop turn are one script call, and reads of one entry in it share one
 * answer: under load many lookups arrive together, and they are concurrent, so one read serves all.
 */
export function createRedisCache(redis: Redis, prefix = 'trk:cache:'): TrackingCache {
  redis.defineCommand('trackingCacheRead', { lua: CACHE_READ_LUA });
  const scripted = redis as CacheRedis;
  const decoded = new LRUCache<string, { version: string; entry: CachedLookup }>({ max: DECODED_ENTRIES });
  /** What a reply stands for: the entry held when unchanged; null when absent or unreadable (a miss). */
  const entryOf = (key: string, reply: string | null, known: { version: string; entry: CachedLookup } | undefined) => {
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
  const readAll = async (keys: readonly string[]): Promise<(CachedLookup | null)[]> => {
    const known = keys.map((key) => decoded.get(key));
    const replies = await scripted.trackingCacheRead(keys.length, ...keys.map((key) => prefix + key), ...known.map((k) => k?.version ?? ''));
    return keys.map((key, i) => entryOf(key, replies[i] ?? null, known[i]));
  };
  // The reads of one event-loop turn go out in one script call, each entry once. The loader's memo
  // holds only the reads of the turn not yet sent: it is emptied as they go out.
  const reads: DataLoader<string, CachedLookup | null> = new DataLoader((keys) => {
    reads.clearAll();
    return readAll(keys);
  }, { batchScheduleFn: dispatchAtEndOfTurn, maxBatchSize: MAX_READS_PER_CALL });
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
