export {
  CLAIM_LEASE_MS, IDEMPOTENCY_TTL_MS,
  type Claim, type IdempotencyRecord, type IdempotencyStore, type StoredAnswer,
} from './store.ts';
export { RedisIdempotencyStore } from './redis.ts';
export { EmbeddedIdempotencyStore, embeddedIdempotencyDir } from './embedded.ts';
export { bodyFingerprint, canonicalJson, keyDigest } from './fingerprint.ts';
