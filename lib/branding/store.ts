import { createHash } from 'node:crypto';
import type { Kv } from '../kv/index.ts';
import type { BrandingDoc } from './doc.ts';

/**
 * The key's branding document (without the logo's bytes) and, apart, its logo. The key prefix is
 * the hash tag, as push's documents of a key carry it, so with a Redis Cluster everything of one
 * key stays on one slot.
 */
export const brandingKey = (prefix: string) => `branding:{${prefix}}`;
export const logoKey = (prefix: string) => `branding-logo:{${prefix}}`;

/**
 * What a tracking page view reads: the branding without the logo's bytes (up to 68 KB of base64
 * that every view would otherwise read and copy), and the logo's version, which names its URL.
 */
export type PageBrandingDoc = Omit<BrandingDoc, 'logo'> & { logo_version: string | null };

/** A logo's version: the first 12 hex digits of its SHA-256 (a new logo, a new URL). */
export function logoVersionOf(logo: string): string {
  return createHash('sha256').update(logo).digest('hex').slice(0, 12);
}

/**
 * Each key's branding, in its own store (`backend.kv('branding')`: DATA_DIR/branding/, or Redis
 * keys `<namespace>branding:`), so an operator backs it up and restores it as one piece. Callers
 * pass only documents parseBranding produced: the store checks nothing itself.
 *
 * Two records per key: the document with the logo's version, and the logo. A put writes the logo
 * first, so a document never names a version whose logo was not stored; a reader between the two
 * writes sees the old document (and the page then shows the new logo under the old version's URL,
 * for that one view).
 */
export class BrandingStore {
  readonly kv: Kv;
  constructor(kv: Kv) {
    this.kv = kv;
  }

  /** The key's branding as set; null when it never set one (or deleted it). */
  async get(prefix: string): Promise<BrandingDoc | null> {
    const stored = await this.kv.get<PageBrandingDoc>(brandingKey(prefix));
    if (!stored) return null;
    const { logo_version: version, ...doc } = stored;
    return { ...doc, logo: version === null ? null : await this.logo(prefix) };
  }

  /** The branding as a page shows it: no logo bytes, the logo's version. */
  forPage(prefix: string): Promise<PageBrandingDoc | null> {
    return this.kv.get<PageBrandingDoc>(brandingKey(prefix));
  }

  /** The key's logo (`data:image/…;base64,…`), or null. */
  logo(prefix: string): Promise<string | null> {
    return this.kv.get<string>(logoKey(prefix));
  }

  /** Replaces the key's branding as a whole. */
  async put(prefix: string, doc: BrandingDoc): Promise<void> {
    const { logo, ...rest } = doc;
    if (logo !== null) await this.kv.set(logoKey(prefix), logo);
    await this.kv.set(brandingKey(prefix), { ...rest, logo_version: logo === null ? null : logoVersionOf(logo) } satisfies PageBrandingDoc);
    if (logo === null) await this.kv.delete(logoKey(prefix));
  }

  async delete(prefix: string): Promise<void> {
    await this.kv.delete(brandingKey(prefix));
    await this.kv.delete(logoKey(prefix));
  }
}
