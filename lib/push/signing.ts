/**
 * Standard Webhooks v1 signing (https://www.standardwebhooks.com): every delivery carries
 * `webhook-id`, `webhook-timestamp` and `webhook-signature`, the last one `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` per signing secret. During a rotation both the old and the new secret
 * sign, space-separated, so a receiver holding either one verifies.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (the form receivers' libraries expect). */
export function generateSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error('webhook secret must start with whsec_');
  const encoded = secret.slice(PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  // Buffer.from ignores characters outside the alphabet; a secret that does not round-trip would
  // sign with a key the receiver's library decodes differently, so refuse it here.
  if (key.length === 0 || key.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) {
    throw new Error('webhook secret is not valid base64 after whsec_');
  }
  return key;
}

export function signatureHeaders(input: {
  id: string;
  timestampSeconds: number;
  body: string;
  secrets: readonly string[];
}): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  if (input.secrets.length === 0) throw new Error('at least one webhook secret is needed to sign');
  if (!Number.isSafeInteger(input.timestampSeconds)) throw new Error('webhook timestamp must be whole seconds');
  const signed = `${input.id}.${input.timestampSeconds}.${input.body}`;
  const signatures = input.secrets.map(
    (secret) => `v1,${createHmac('sha256', keyOf(secret)).update(signed, 'utf8').digest('base64')}`,
  );
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': signatures.join(' '),
  };
}
