import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AddressThrottle, ThrottleRule } from '../../../lib/throttle/index.ts';
import { ApiError } from '../http/errors.ts';

/** Compares digests so neither the token's length nor its content leaks through timing. */
function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Wrong admin tokens per address: after 10 in 15 minutes every admin call from that address is
 * refused until the oldest leaves the window. Guessing a generated token is hopeless anyway; this
 * caps guessing a weak one an operator chose, and keeps the noise out of the logs.
 */
export const WRONG_ADMIN_TOKENS: ThrottleRule = { name: 'admin-token', limit: 10, windowMs: 15 * 60_000 };

export async function requireAdmin(request: FastifyRequest, token: string, throttle: AddressThrottle, now: number): Promise<void> {
  const throttled = await throttle.check(WRONG_ADMIN_TOKENS, request.ip, now);
  if (throttled.blocked) {
    throw new ApiError('too_many_attempts', 'Too many wrong admin tokens from this address. Try again later.', { 'Retry-After': throttled.retryAfterSeconds });
  }
  const header = request.headers.authorization ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match || !sameToken(match[1]!.trim(), token)) {
    // A call without a token is a mistake, not a guess: only a wrong token counts.
    if (header !== '') await throttle.record(WRONG_ADMIN_TOKENS, request.ip, now);
    throw new ApiError('unauthorized', 'Admin calls need Authorization: Bearer <ADMIN_TOKEN>.');
  }
}
