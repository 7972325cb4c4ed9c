import type { Kv } from '../kv/index.ts';
import type { BrandingDoc } from './doc.ts';

/**
 * The key's one branding document. The key prefix is the hash tag, as push's documents of a key
 * carry it, so with a Redis Cluster everything of one key stays on one slot.
 */
export const brandingKey = (prefix: string) => `branding:{${prefix}}`;

/**
 * Each key's branding, in its own store (`backend.kv('branding')`: DATA_DIR/branding/, or Redis
 * keys `<namespace>branding:`), so an operator backs it up and restores it as one piece. Callers
 * pass only documents parseBranding produced: the store checks nothing itself.
 */
export class BrandingStore {
  readonly kv: Kv;
  constructor(kv: Kv) {
    this.kv = kv;
  }

  /** The key's branding; null when it never set one (or deleted it). */
  get(prefix: string): Promise<BrandingDoc | null> {
    return this.kv.get<BrandingDoc>(brandingKey(prefix));
  }

  /** Replaces the key's branding as a whole (one write: a reader sees the old document or the new). */
  put(prefix: string, doc: BrandingDoc): Promise<void> {
    return this.kv.set(brandingKey(prefix), doc);
  }

  delete(prefix: string): Promise<void> {
    return this.kv.delete(brandingKey(prefix));
  }
}
