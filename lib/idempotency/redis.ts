import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/index.ts';
import {
  claimOf, CLAIM_LEASE_MS, IDEMPOTENCY_TTL_MS, liveRecord, type Claim, type IdempotencyRecord, type IdempotencyStore, type StoredAnswer,
} from './store.ts';

/**
 * Claims a key: writes the pending record unless a live one exists, which is returned instead.
 * KEYS[1] the key. ARGV: 1 pending record JSON, 2 now (ms), 3 Redis expiry (ms).
 * The record's own `expires_at` decides liveness (the caller's clock); the Redis expiry only
 * collects garbage, a little later.
 */
const CLAIM_LUA = `
local current = redis.call('GET', KEYS[1])
if current then
  local record = cjson.decode(current)
  if tonumber(record.expires_at) > tonumber(ARGV[2]) then return current end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return false
`;

/** Deletes the key if it still holds the pending claim with token ARGV[1]. */
const RELEASE_LUA = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local record = cjson.decode(current)
if record.state == 'pending' and record.token == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
`;

type ScriptedRedis = RedisClient & {
  idemClaim(key: string, record: string, nowMs: string, pxMs: string): Promise<string | null>;
  idemRelease(key: string, token: string): Promise<number>;
};

/**
 * Idempotency records in the Redis of the access store, one string per key:
 * `<namespace>{<scope>}:<key digest>`. The scope (the API key's hash) is the hash tag, so a key's
 * records share a slot with nothing else needed; each operation touches one key.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly redis: ScriptedRedis;

  private readonly namespace: string;
  constructor(redis: RedisClient, namespace = 'trk:idempotency:') {
    this.namespace = namespace;
    redis.defineCommand('idemClaim', { numberOfKeys: 1, lua: CLAIM_LUA });
    redis.defineCommand('idemRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    this.redis = redis as ScriptedRedis;
  }

  private k(scope: string, key: string): string {
    return `${this.namespace}{${scope}}:${key}`;
  }

  async claim(scope: string, key: string, fingerprint: string, nowMs: number): Promise<Claim> {
    const token = randomUUID();
    const pending: IdempotencyRecord = { state: 'pending', fingerprint, token, expires_at: nowMs + CLAIM_LEASE_MS };
    const current = await this.redis.idemClaim(this.k(scope, key), JSON.stringify(pending), String(nowMs), String(CLAIM_LEASE_MS));
    if (current === null) return { kind: 'claimed', token };
    const record = liveRecord(JSON.parse(current) as IdempotencyRecord, nowMs);
    // The script saw it live at the same `nowMs`.
    return claimOf(record!);
  }

  async complete(scope: string, key: string, fingerprint: string, answer: StoredAnswer, nowMs: number): Promise<void> {
    const record: IdempotencyRecord = { state: 'done', fingerprint, answer, expires_at: nowMs + IDEMPOTENCY_TTL_MS };
    await this.redis.set(this.k(scope, key), JSON.stringify(record), 'PX', IDEMPOTENCY_TTL_MS);
  }

  async release(scope: string, key: string, token: string): Promise<void> {
    await this.redis.idemRelease(this.k(scope, key), token);
  }

  async close(): Promise<void> {}
}
