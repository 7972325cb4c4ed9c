/**
 * Share links of analyses (contracts.md; issue 29 findings 6 and 7). A link's token is 32 random
 * characters and nothing else: it names no key, no analysis and no expiry. The state store keeps,
 * under the token's SHA-256 (a copy of the store holds no working link), the analysis it opens,
 * the key that shared it, its expiry and the analysis's share generation when it was made.
 * Revoking an analysis's links moves its generation on: every link made before stops at once, on
 * every instance, without a list of them to walk. Whether the key may still show it (revoked,
 * suspended) is the caller's question at every view (lib/access standing.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kv } from '../kv/index.ts';
import { DAY_MS } from '../time/index.ts';

export const SHARE_VALIDITY_MS = 30 * DAY_MS;

/** 24 random bytes: 32 base64url characters. */
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

const shareKeys = {
  link: (tokenHash: string) => `analyzer-share:${tokenHash}`,
  generation: (prefix: string, id: string) => `an:{${prefix}}:${id}:share-generation`,
} as const;

interface LinkDoc {
  prefix: string;
  id: string;
  expires_ms: number;
  generation: number;
}

interface GenerationDoc {
  generation: number;
}

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** The analysis a valid link opens. */
export interface SharedAnalysis {
  prefix: string;
  id: string;
  expiresMs: number;
}

export class ShareLinks {
  private readonly kv: Kv;
  constructor(kv: Kv) {
    this.kv = kv;
  }

  /**
   * A new link to the analysis, valid 30 days. The generation document lives at least as long as
   * any link made under it (its expiry moves on with every link and every revocation), so it never
   * lapses back to a generation a live link was made under.
   */
  async create(prefix: string, id: string, nowMs: number): Promise<{ token: string; expiresMs: number }> {
    const generation = await this.kv.update<GenerationDoc, number>(shareKeys.generation(prefix, id), (current) => ({
      next: current ?? { generation: 0 }, result: current?.generation ?? 0, ttlMs: SHARE_VALIDITY_MS,
    }));
    const token = randomBytes(24).toString('base64url');
    // Whole seconds: the answer's expires_at and the link's real end are the same instant.
    const expiresMs = Math.floor((nowMs + SHARE_VALIDITY_MS) / 1000) * 1000;
    const doc: LinkDoc = { prefix, id, expires_ms: expiresMs, generation };
    await this.kv.set(shareKeys.link(tokenHash(token)), doc, SHARE_VALIDITY_MS);
    return { token, expiresMs };
  }

  /** The analysis a token opens, or null: malformed, unknown, expired or revoked. */
  async resolve(token: string, nowMs: number): Promise<SharedAnalysis | null> {
    if (!TOKEN.test(token)) return null;
    const doc = await this.kv.get<LinkDoc>(shareKeys.link(tokenHash(token)));
    if (!doc || nowMs >= doc.expires_ms) return null;
    const current = await this.kv.get<GenerationDoc>(shareKeys.generation(doc.prefix, doc.id));
    if ((current?.generation ?? 0) !== doc.generation) return null;
    return { prefix: doc.prefix, id: doc.id, expiresMs: doc.expires_ms };
  }

  /** Every link made so far to the analysis stops working; links made afterwards work. */
  async revokeAll(prefix: string, id: string): Promise<void> {
    await this.kv.update<GenerationDoc, void>(shareKeys.generation(prefix, id), (current) => ({
      next: { generation: (current?.generation ?? 0) + 1 }, result: undefined, ttlMs: SHARE_VALIDITY_MS,
    }));
  }
}


