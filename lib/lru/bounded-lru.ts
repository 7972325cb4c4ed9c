/**
 * An LRU of at most `entries` entries whose memory grows with what it holds. lru-cache's `max`
 * allocates its slot arrays for `max` entries up front (~24 bytes an entry: the sandbox's 200,000
 * anchors and the page views' 100,000 addresses held ~7.5 MB from the start, in a process that
 * may never see more than a few hundred); counting each entry as size 1 against `maxSize` bounds
 * it the same way with arrays that grow.
 */
import { LRUCache } from 'lru-cache';

export function boundedLru<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(entries: number): LRUCache<K, V> {
  return new LRUCache<K, V>({ maxSize: entries, sizeCalculation: () => 1 });
}
