/**
 * Idempotency keys of POST requests (contracts.md: `Idempotency-Key` on POST /v1/track/batch). The
 * first request with a key claims it, and its answer is kept 24 h; a retry with the same key and
 * body gets that answer again, and one with another body is told so. Two implementations, chosen
 * like the access store's: Redis (shared by every API process) and embedded (a journal under
 * DATA_DIR), so an answer holds across API instances and restarts.
 */

/** How long a first answer is kept and replayed (contracts.md: 24 h). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/**
 * How long a claim without an answer blocks the key: longer than any batch takes (the slowest
 * carrier is bounded by its client's timeout), short enough that a crashed request does not block
 * a retry for long.
 */
export const CLAIM_LEASE_MS = 120_000;

/** A stored answer: the status and the exact body sent. */
export interface StoredAnswer {
  status: number;
  body: string;
  /**
   * The first answer's headers a replay repeats (its rate-limit headers); absent in answers kept
   * before they were stored.
   */
  headers?: Record<string, string>;
}

export type Claim =
  /** This request owns the key: answer it, then `complete` (or `release` on failure). */
  | { kind: 'claimed'; token: string }
  /** Another request with this key is still being answered. */
  | { kind: 'pending'; fingerprint: string }
  /** The key was answered: replay when the fingerprint is the same. */
  | { kind: 'done'; fingerprint: string; answer: StoredAnswer };

/** What is kept per key (JSON in Redis and in the journal). */
export type IdempotencyRecord =
  | { state: 'pending'; fingerprint: string; token: string; expires_at: number }
  | { state: 'done'; fingerprint: string; answer: StoredAnswer; expires_at: number };

export interface IdempotencyStore {
  /**
   * Claims `key` of `scope` (the API key's hash: keys of different customers never meet) for a
   * request whose body has `fingerprint`, unless a live record exists, which is returned instead.
   * `nowMs` decides expiry, so tests move time with their clock.
   */
  claim(scope: string, key: string, fingerprint: string, nowMs: number): Promise<Claim>;
  /** Keeps the answer of a claimed request for IDEMPOTENCY_TTL_MS. */
  complete(scope: string, key: string, fingerprint: string, answer: StoredAnswer, nowMs: number): Promise<void>;
  /** Drops a claim whose request failed before answering, so a retry may run. Only the owner's. */
  release(scope: string, key: string, token: string): Promise<void>;
  close(): Promise<void>;
}

/** The live record, or null when absent or expired by `nowMs`. */
export function liveRecord(record: IdempotencyRecord | null, nowMs: number): IdempotencyRecord | null {
  return record && record.expires_at > nowMs ? record : null;
}

export function claimOf(record: IdempotencyRecord): Claim {
  return record.state === 'pending'
    ? { kind: 'pending', fingerprint: record.fingerprint }
    : { kind: 'done', fingerprint: record.fingerprint, answer: record.answer };
}
