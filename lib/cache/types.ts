import type { CachedLookup } from './policy.ts';

/** Where tracking records are cached: in process (embedded default) or in Redis (distributed). */
export interface TrackingCache {
  get(key: string): Promise<CachedLookup | null>;
  /** Stores `entry`; `ttlMs` null keeps it until evicted (terminal records). */
  set(key: string, entry: CachedLookup, ttlMs: number | null): Promise<void>;
  close(): Promise<void>;
}
