import { createHash } from 'node:crypto';
import DataLoader from 'dataloader';
import { defineKeyedScript, isCluster, type RedisClient } from '../redis/index.ts';
import { LRUCache } from 'lru-cache';
import { dispatchAtEndOfTurn } from '../batch/index.ts';
import { entryOfText, entryText } from './entry.ts';
import type { CachedLookup } from './policy.ts';
import type { TrackingCache } from './types.ts';
import { fnv1a32 } from '../random/fnv1a.ts';

/** Decoded entries remembered per process (see below); a few MiB at most. */
const DECODED_ENTRIES = 1_000;
/** Entries read by one script call at most (bounds the reply, ~3 KB per entry not held). */
const MAX_READS_PER_CALL = 200;
/** Hex characters of the content version that starts every stored value. */
const VERSION_LENGTH = 16;
/**
 * Hash-tag buckets. A cluster runs a script only when all its keys share a hash slot, so each key
 * carries a `{bucket}` tag and one call reads one bucket. 64 buckets spread the entries over up to
 * 64 slots (so over any cluster of a few masters, evenly enough), while a turn's 200 reads still
 * go out as ~64 calls at most, not 200; the node connections pipeline the calls of one turn.
 */
export const CACHE_BUCKETS = 64;

/** The bucket of a lookup key: FNV-1a, cheap and stable across processes and versions. */
export function bucketOf(key: string): number {
  return fnv1a32(key) % CACHE_BUCKETS;
}

/** Where a lookup key's entry is stored under `prefix`: the bucket tag first, then the key. */
export function storedKey(prefix: string, key: string): string {
  return `${prefix}{c${bucketOf(key)}}${key}`;
}

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

/** A value as stored: the content version of the entry's text (lib/cache/entry.ts), then the text. */
export function encodeEntry(entry: CachedLookup): string {
  const text = entryText(entry);
  return createHash('sha1').update(text).digest('hex').slice(0, VERSION_LENGTH) + text;
}

/**
 * Redis cache: one value per lookup key, with the policy's TTL (none for terminal records).
 *
 * Every `get` asks Redis, so all API processes see the same entry. Values are compact entries
 * (lib/cache/entry.ts: a short line of facts, then the record's JSON, which is never parsed), and
 * each process keeps the entries it decoded last with their content version, so Redis sends an
 * entry only when its version is not the one the caller holds. A value that cannot be read (another format) counts as a miss.
 *
 * The reads of one event-loop turn are one script call (on a cluster, one per bucket), and reads of
 * one entry in it share one answer: under load many lookups arrive together, and they are
 * concurrent, so one read serves all.
 */
export function createRedisCache(redis: RedisClient, prefix = 'trk:cache:'): TrackingCache {
  const read = defineKeyedScript<string | null>(redis, 'trackingCacheRead', CACHE_READ_LUA);
  const decoded = new LRUCache<string, { version: string; entry: CachedLookup }>({ max: DECODED_ENTRIES });
  /** What a reply stands for: the entry held when unchanged; null when absent or unreadable (a miss). */
  const entryOf = (key: string, reply: string | null, known: { version: string; entry: CachedLookup } | undefined) => {
    if (reply === null) return null;
    if (known && reply === known.version) return known.entry;
    const entry = entryOfText(reply.slice(VERSION_LENGTH));
    if (entry === null) return null;
    decoded.set(key, { version: reply.slice(0, VERSION_LENGTH), entry });
    return entry;
  };
  const readGroup = async (keys: readonly string[]): Promise<(CachedLookup | null)[]> => {
    const known = keys.map((key) => decoded.get(key));
    const replies = await read(keys.map((key) => storedKey(prefix, key)), known.map((k) => k?.version ?? ''));
    return keys.map((key, i) => entryOf(key, replies[i] ?? null, known[i]));
  };
  // One server runs a script over any keys: the whole turn in one call. A cluster: one per bucket.
  const perSlot = isCluster(redis);
  const readAll = async (keys: readonly string[]): Promise<(CachedLookup | null)[]> => {
    if (!perSlot) return readGroup(keys);
    const groups = new Map<number, number[]>();
    keys.forEach((key, i) => {
      const bucket = bucketOf(key);
      const group = groups.get(bucket);
      if (group) group.push(i);
      else groups.set(bucket, [i]);
    });
    const results: (CachedLookup | null)[] = new Array<CachedLookup | null>(keys.length).fill(null);
    await Promise.all([...groups.values()].map(async (indexes) => {
      const entries = await readGroup(indexes.map((i) => keys[i]!));
      indexes.forEach((i, j) => { results[i] = entries[j]!; });
    }));
    return results;
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
      if (ttlMs === null) await redis.set(storedKey(prefix, key), value);
      else await redis.set(storedKey(prefix, key), value, 'PX', ttlMs);
    },
    async close() {
      decoded.clear();
      // The connection belongs to the caller, which may share it with other stores.
    },
  };
}
