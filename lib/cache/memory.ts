import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { entryBytes, entryOfText, entryText } from './entry.ts';
import { isTerminal, type CachedLookup } from './policy.ts';
import type { TrackingCache } from './types.ts';

/** The in-process cache's bound when none is given (CACHE_MAX_BYTES's default). */
export const DEFAULT_CACHE_MAX_BYTES = 128 * 2 ** 20;
/**
 * The share of the bound that final records (delivered, returned, cancelled) may take in memory
 * when they also have a file: the rest of them is read back from disk, where the kernel's page
 * cache keeps the recently read ones without adding to the process's memory. Moving records have
 * no other copy (evicting one costs a carrier poll), so they get the larger share.
 */
export const FINAL_SHARE = 1 / 8;

export interface MemoryCacheOptions {
  /** What the entries may cost in memory (`entryBytes`): least recently used ones go past it. */
  maxBytes?: number;
  /**
   * Where terminal records are also written (one file each), so one evicted from memory is read
   * back instead of polling the carrier again: "cached permanently" (docs/engineers/decisions.md).
   * Null: memory only (tests of the bound itself).
   */
  dir?: string | null;
  /** Told of a file that could not be written (the record stays cached in memory). */
  onError?: (err: unknown) => void;
}

/** Conventional directory of the terminal records under DATA_DIR. */
export function embeddedRecordsDir(dataDir: string): string {
  return join(dataDir, 'records');
}

/**
 * In-process cache of compact entries (lib/cache/entry.ts), bounded by bytes. Terminal records
 * are written to `dir` as well, under a hash of the lookup key (256 directories), and read from
 * there when memory no longer holds them; in memory they keep to `FINAL_SHARE` of the bound. A
 * file is written to a temporary name and renamed, so a crash leaves a whole file or none; one
 * that cannot be read counts as a miss.
 */
export interface MemoryCache extends TrackingCache {
  /** What the entries held cost by `entryBytes` (never more than the bound), and how many they are. */
  held(): { bytes: number; entries: number };
}

export function createMemoryCache(options: MemoryCacheOptions = {}): MemoryCache {
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES;
  const dir = options.dir ?? null;
  const lruOf = (maxSize: number) => new LRUCache<string, CachedLookup>({
    maxSize,
    // The key string and the LRU's own slots come with every entry.
    sizeCalculation: (entry, key) => entryBytes(entry.shipment) + 2 * key.length + 64,
    ttlAutopurge: false,
  });
  // Without files, final records have no other copy: one LRU holds every entry.
  const finalBytes = dir === null ? 0 : Math.floor(maxBytes * FINAL_SHARE);
  const lru = lruOf(maxBytes - finalBytes);
  const finalLru = dir === null ? lru : lruOf(finalBytes);
  const isFinal = (entry: CachedLookup) => entry.shipment !== null && isTerminal(entry.shipment);
  const madeDirs = new Set<string>();
  const pathOf = (key: string) => {
    const hash = createHash('sha1').update(key).digest('hex');
    return { sub: join(dir!, hash.slice(0, 2)), file: join(dir!, hash.slice(0, 2), hash.slice(2)) };
  };
  const writeDurable = async (key: string, entry: CachedLookup) => {
    const { sub, file } = pathOf(key);
    if (!madeDirs.has(sub)) {
      await mkdir(sub, { recursive: true });
      madeDirs.add(sub);
    }
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, entryText(entry));
    await rename(temp, file);
  };
  const readDurable = async (key: string): Promise<CachedLookup | null> => {
    let text: string;
    try {
      text = await readFile(pathOf(key).file, 'utf8');
    } catch {
      return null;
    }
    const entry = entryOfText(text);
    return entry?.shipment && isTerminal(entry.shipment) ? entry : null;
  };
  return {
    async get(key) {
      const held = lru.get(key) ?? finalLru.get(key);
      if (held !== undefined || dir === null) return held ?? null;
      const durable = await readDurable(key);
      // Back in memory: a record asked for once is often asked for again.
      if (durable) finalLru.set(key, durable);
      return durable;
    },
    async set(key, entry, ttlMs) {
      const final = isFinal(entry);
      // A key lives in one of the two: a moving record that became final moves over.
      (final ? lru : finalLru).delete(key);
      (final ? finalLru : lru).set(key, entry, ttlMs === null ? {} : { ttl: ttlMs });
      if (dir === null || !final) return;
      try {
        await writeDurable(key, entry);
      } catch (err) {
        // Still cached in memory; once evicted it is polled again (a carrier poll, not an error).
        options.onError?.(err);
      }
    },
    held: () => dir === null
      ? { bytes: lru.calculatedSize, entries: lru.size }
      : { bytes: lru.calculatedSize + finalLru.calculatedSize, entries: lru.size + finalLru.size },
    async close() {
      lru.clear();
      finalLru.clear();
    },
  };
}
