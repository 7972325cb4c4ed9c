import { describe, expect, it } from 'vitest';
import { boundedLru } from './bounded-lru.ts';

describe('boundedLru', () => {
  it('keeps at most its entries, forgetting the least recently used first', () => {
    const lru = boundedLru<string, number>(3);
    for (const [i, key] of ['a', 'b', 'c'].entries()) lru.set(key, i);
    expect(lru.get('a')).toBe(0); // a is now the most recent
    lru.set('d', 3);
    expect(lru.size).toBe(3);
    expect(lru.has('b')).toBe(false);
    expect([...lru.keys()].sort()).toEqual(['a', 'c', 'd']);
  });

  it('does not hold slots for entries it has not seen (a million-entry bound costs nothing up front)', () => {
    const before = process.memoryUsage().heapUsed;
    const lrus = Array.from({ length: 20 }, () => boundedLru<string, number>(1_000_000));
    const grown = process.memoryUsage().heapUsed - before;
    // Preallocated, twenty would hold ~480 MB of slot arrays.
    expect(grown).toBeLessThan(20 * 1024 * 1024);
    expect(lrus.every((lru) => lru.size === 0)).toBe(true);
  });
});
