import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so two bodies that mean the same give the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 of a request body's canonical JSON: "the same body" for Idempotency-Key. */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/** The stored form of an Idempotency-Key (any length the header rule allows, always 64 characters). */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
