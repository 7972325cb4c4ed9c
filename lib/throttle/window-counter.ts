/**
 * Requests per client address in fixed windows, in this process's memory: for requests that come
 * often and cost little, where the file or Redis throttle (rule.ts: a write per attempt, every
 * attempt's time kept) would cost more than the request itself. The tracking page counts its views
 * with it. What it gives up, on purpose: a restart forgets the counts, and each API process counts
 * its own views (with several processes an address may make that many times as many). Pure apart
 * from its memory: the time comes in as `now`.
 */
import type { LRUCache } from 'lru-cache';
import { boundedLru } from '../lru/bounded-lru.ts';

export type WindowVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Window {
  startMs: number;
  count: number;
}

/** Addresses remembered at most: past it the least recently seen is forgotten (it starts a fresh window). */
const DEFAULT_ADDRESSES = 100_000;

export class WindowCounter {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly windows: LRUCache<string, Window>;

  constructor(options: { limit: number; windowMs: number; addresses?: number }) {
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.windows = boundedLru(options.addresses ?? DEFAULT_ADDRESSES);
  }

  /** Counts one request of `address` at `now` if its window has room; else says when the window ends. */
  take(address: string, now: number): WindowVerdict {
    let window = this.windows.get(address);
    if (!window || now - window.startMs >= this.windowMs || now < window.startMs) {
      window = { startMs: now, count: 0 };
      this.windows.set(address, window);
    }
    if (window.count >= this.limit) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.startMs + this.windowMs - now) / 1000)) };
    }
    window.count++;
    return { allowed: true };
  }
}
