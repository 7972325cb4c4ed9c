/**
 * When the sandbox first saw each number (per carrier): a scenario's story is told relative to that
 * moment, so its scans keep their times at every later poll, as a real carrier's do. Without it a
 * story re-stamped at every poll has new scan times, so new event ids, and a watch on the number
 * would announce the same five scans again at every poll.
 *
 * Bounded: the least recently polled numbers are forgotten past `max` (a forgotten number starts a
 * new story at its next poll, as after a sandbox restart), so a load test's millions of numbers
 * cannot grow the process without end.
 */
import type { LRUCache } from 'lru-cache';
import { ownString } from '../compact/own-string.ts';
import { boundedLru } from '../lru/bounded-lru.ts';

export const DEFAULT_MAX_ANCHORS = 200_000;

export class AnchorBook {
  /**
   * Whole seconds (a small integer V8 keeps in the slot; milliseconds, past 2^31, were a boxed
   * number each), under a key string of its own (a key concatenated from the request's AWB was
   * three string objects, one of them a slice that kept the request's text alive): ~150 bytes less
   * per number, 15 MiB at 100,000 numbers.
   */
  private readonly firstSeen: LRUCache<string, number>;

  constructor(max = DEFAULT_MAX_ANCHORS) {
    this.firstSeen = boundedLru(max);
  }

  /** The moment (whole seconds, in ms) `awb` of `carrier` was first polled; `now`'s second when this is the first poll. */
  anchor(carrier: string, awb: string, now: number): number {
    const key = ownString(`${carrier}:${awb.trim().toUpperCase()}`);
    const seen = this.firstSeen.get(key);
    if (seen !== undefined) return seen * 1000;
    const second = Math.floor(now / 1000);
    this.firstSeen.set(key, second);
    return second * 1000;
  }
}
