/**
 * The e-mail's one-click unsubscribe token (RFC 8058: the URL itself must name the recipient, since
 * the mailbox provider's POST carries nothing else). It names the key and the address's suppression
 * digest, never the address, and is signed so nobody can stop notices to an address of another key
 * or make one up. Pure, given the secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { stopDigestOf } from './store.ts';

const macOf = (secret: Buffer, prefix: string, digest: string) =>
  createHmac('sha256', secret).update(`unsubscribe|${prefix}|${digest}`).digest().subarray(0, 16);

export function unsubscribeTokenOf(secret: Buffer, prefix: string, email: string): string {
  const digest = stopDigestOf(prefix, email);
  return `${prefix}.${digest}.${macOf(secret, prefix, digest).toString('base64url')}`;
}

/** The key and the digest a token names, or null when it is not one this deployment signed. */
export function readUnsubscribeToken(secret: Buffer, token: string): { prefix: string; digest: string } | null {
  const m = /^(trk_(?:live|test)_[A-Za-z0-9]{7})\.([0-9a-f]{64})\.([A-Za-z0-9_-]{22})$/.exec(token);
  if (!m) return null;
  const given = Buffer.from(m[3]!, 'base64url');
  const wanted = macOf(secret, m[1]!, m[2]!);
  return given.length === wanted.length && timingSafeEqual(given, wanted) ? { prefix: m[1]!, digest: m[2]! } : null;
}
