import type { RedisClient } from '../redis/index.ts';
import { DAY_S } from '../time/index.ts';
import { newestFirst, type LinkAttempt, type PaymentClaim, type PaymentRecord, type PaymentStore } from './payments.ts';

/**
 * Claims a payment id in one step (claimOf's rule, in Lua): KEYS[1] the record, KEYS[2] the key's
 * index; ARGV[1] the pending record, ARGV[2] now (ms), ARGV[3] its paid time (ms), ARGV[4] the id.
 * Answers {'claimed'}, {'settled', record} or {'in_progress'}.
 */
const CLAIM_LUA = `
local current = redis.call('GET', KEYS[1])
if current then
  local record = cjson.decode(current)
  if record.state == 'settled' then return {'settled', current} end
  if tonumber(record.lease_until) > tonumber(ARGV[2]) then return {'in_progress'} end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
return {'claimed'}
`;

type ScriptedRedis = RedisClient & {
  paymentClaim(record: string, index: string, pending: string, nowMs: string, score: string, id: string): Promise<[string, string?]>;
};

/** Attempts' links are kept a week: a page left open longer starts a new attempt. */
const ATTEMPT_TTL_S = 7 * DAY_S;

/**
 * Payments in the Redis of the keys. A payment's record and its key's index share the key prefix
 * as hash tag (`<ns>{<key_prefix>}:pay:<id>`, `<ns>{<key_prefix>}:payments`), so the claim is one
 * script on one slot, also on a cluster; the same payment id always arrives with the same signed
 * notes, so it always maps to the same record.
 */
export class RedisPaymentStore implements PaymentStore {
  private readonly redis: ScriptedRedis;

  private readonly namespace: string;
  constructor(redis: RedisClient, namespace = 'trk:payments:') {
    this.namespace = namespace;
    redis.defineCommand('paymentClaim', { numberOfKeys: 2, lua: CLAIM_LUA });
    this.redis = redis as ScriptedRedis;
  }

  private tag(prefix: string | null): string {
    return `${this.namespace}{${prefix ?? '-'}}`;
  }

  async claim(pending: PaymentRecord, nowMs: number): Promise<PaymentClaim> {
    const tag = this.tag(pending.key_prefix);
    const [kind, current] = await this.redis.paymentClaim(
      `${tag}:pay:${pending.id}`, `${tag}:payments`, JSON.stringify(pending), String(nowMs), String(Date.parse(pending.paid_at)), pending.id,
    );
    if (kind === 'settled') return { kind, record: JSON.parse(current!) as PaymentRecord };
    return { kind: kind as 'claimed' | 'in_progress' };
  }

  async settle(record: PaymentRecord): Promise<void> {
    await this.redis.set(`${this.tag(record.key_prefix)}:pay:${record.id}`, JSON.stringify(record));
  }

  async listByKey(prefix: string): Promise<PaymentRecord[]> {
    const tag = this.tag(prefix);
    const ids = await this.redis.zrange(`${tag}:payments`, '0', '-1');
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(...ids.map((id) => `${tag}:pay:${id}`));
    return newestFirst(texts.filter((t): t is string => t !== null).map((t) => JSON.parse(t) as PaymentRecord));
  }

  async saveAttempt(attempt: LinkAttempt): Promise<LinkAttempt> {
    const key = `${this.namespace}attempt:${attempt.reference_id}`;
    const set = await this.redis.set(key, JSON.stringify(attempt), 'EX', ATTEMPT_TTL_S, 'NX');
    if (set === 'OK') return attempt;
    return (await this.getAttempt(attempt.reference_id)) ?? attempt;
  }

  async getAttempt(referenceId: string): Promise<LinkAttempt | null> {
    const text = await this.redis.get(`${this.namespace}attempt:${referenceId}`);
    return text ? JSON.parse(text) as LinkAttempt : null;
  }

  async close(): Promise<void> {}
}
