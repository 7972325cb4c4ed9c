/** Standard Webhooks v1 signatures (contracts.md "Push"), HMAC-SHA256 with node:crypto. */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export interface SignatureInput {
  id: string;
  timestampSeconds: number;
  body: string;
  /** Every secret that signs now: during a rotation the new and the old one. */
  secrets: readonly string[];
}

/** The three headers of one attempt; `webhook-signature` holds one `v1,<base64>` per secret. */
export function signatureHeaders(input: SignatureInput): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const signed = `${input.id}.${input.timestampSeconds}.${input.body}`;
  const signatures = input.secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(signed).digest('base64')}`);
  return { 'webhook-id': input.id, 'webhook-timestamp': String(input.timestampSeconds), 'webhook-signature': signatures.join(' ') };
}
