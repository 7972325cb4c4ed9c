import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import { bodyFingerprint, keyDigest, type IdempotencyStore, type StoredAnswer } from '../../../../lib/idempotency/index.ts';
import { ApiError } from '../../http/errors.ts';

/** Stripe's rule: up to 255 characters; visible ASCII only, so a key is the same on every client. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** How long a retry waits for the first request with its key to finish, polling the store. */
const WAIT_FOR_FIRST_MS = 30_000;
const POLL_MS = 50;

/** The request's Idempotency-Key, null without one, 400 when malformed. */
export function idempotencyKeyOf(request: FastifyRequest): string | null {
  const header = request.headers['idempotency-key'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  if (!KEY_PATTERN.test(value)) throw new ApiError('bad_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
  return value;
}

/** A batch guarded by an Idempotency-Key: either the first answer again, or this request's turn. */
export type Guard =
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'first'; complete(answer: StoredAnswer, nowMs: number): Promise<void>; release(): Promise<void> };

/**
 * contracts.md: the same key and body within 24 h returns the first answer; another body with the
 * key → 422 `idempotency_key_reused`. A retry that arrives while the first request is still being
 * answered waits for its answer (a client retrying on a timeout must not run the batch twice), up
 * to WAIT_FOR_FIRST_MS, then hears 409 `conflict`.
 */
export async function guardBatch(
  store: IdempotencyStore, scope: string, key: string, body: unknown, clock: () => number,
): Promise<Guard> {
  const digest = keyDigest(key);
  const fingerprint = bodyFingerprint(body);
  const waitUntil = Date.now() + WAIT_FOR_FIRST_MS;
  for (;;) {
    const claim = await store.claim(scope, digest, fingerprint, clock());
    if (claim.kind === 'claimed') {
      return {
        kind: 'first',
        complete: (answer, nowMs) => store.complete(scope, digest, fingerprint, answer, nowMs),
        release: () => store.release(scope, digest, claim.token),
      };
    }
    if (claim.fingerprint !== fingerprint) {
      throw new ApiError(
        'idempotency_key_reused',
        'This Idempotency-Key was used with another request body in the last 24 hours. Use a new key for a new batch.',
      );
    }
    if (claim.kind === 'done') return { kind: 'replay', answer: claim.answer };
    if (Date.now() >= waitUntil) throw new ApiError('conflict', 'A request with this Idempotency-Key is still being answered. Retry in a moment.');
    await sleep(POLL_MS);
  }
}
