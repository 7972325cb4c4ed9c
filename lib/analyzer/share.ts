/**
 * Share links of analyses (contracts.md): a token naming the key prefix, the analysis and the
 * expiry, signed with HMAC-SHA256 under a server secret kept in the state store (the same for every
 * instance, surviving restarts, created by the first process that needs it). Pure apart from that.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PushKv } from '../webhooks/index.ts';
import { DAY_MS } from '../time/index.ts';

export const SHARE_VALIDITY_MS = 30 * DAY_MS;
const SECRET_KEY = 'analyzer-share-secret';

export async function shareSecret(kv: PushKv): Promise<Buffer> {
  const stored = await kv.update<string, string>(SECRET_KEY, (current) => (current
    ? { result: current }
    : (() => { const secret = randomBytes(32).toString('base64url'); return { next: secret, result: secret }; })()));
  return Buffer.from(stored, 'base64url');
}

const sign = (secret: Buffer, payload: string) => createHmac('sha256', secret).update(payload).digest('base64url');

export function shareToken(secret: Buffer, prefix: string, id: string, expiresMs: number): string {
  const payload = Buffer.from(`${prefix}.${id}.${Math.floor(expiresMs / 1000)}`).toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

/** The analysis a token names, or null when it is forged, malformed or expired. */
export function verifyShareToken(secret: Buffer, token: string, nowMs: number): { prefix: string; id: string; expiresMs: number } | null {
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined) return null;
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  const [prefix, id, exp] = Buffer.from(payload, 'base64url').toString('utf8').split('.');
  const expiresMs = Number(exp) * 1000;
  if (!prefix || !id || !Number.isFinite(expiresMs) || nowMs >= expiresMs) return null;
  return { prefix, id, expiresMs };
}
