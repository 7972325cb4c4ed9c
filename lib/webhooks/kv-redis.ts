import type { Redis } from 'ioredis';
import { MAX_UPDATE_ATTEMPTS, type PushKv } from './kv.ts';

/**
 * Compare-and-set: writes ARGV[2] (or deletes it when '') only if the document still is ARGV[1]
 * ('' = absent). Comparing the whole text needs no version field and documents stay small (a few KB).
 */
const CAS_LUA = `
local current = redis.call('GET', KEYS[1])
if current == false then current = '' end
if current ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
elseif tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return 1
`;

/** Due members, each leased in the same step so two dispatchers never take the same one. */
const CLAIM_LUA = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], member) end
return due
`;

type ScriptedRedis = Redis & {
  pushCas(key: string, expected: string, next: string, ttlMs: number): Promise<number>;
  pushClaim(key: string, nowMs: number, leaseUntilMs: number, limit: number): Promise<string[]>;
};

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** PushKv on Redis: every key under `namespace` (tests use their own). */
export class RedisPushKv implements PushKv {
  private readonly redis: ScriptedRedis;

  constructor(redis: Redis, private readonly namespace = 'trk:push:') {
    redis.defineCommand('pushCas', { numberOfKeys: 1, lua: CAS_LUA });
    redis.defineCommand('pushClaim', { numberOfKeys: 1, lua: CLAIM_LUA });
    this.redis = redis as ScriptedRedis;
  }

  private k(key: string): string {
    return this.namespace + key;
  }

  async get<T>(key: string): Promise<T | null> {
    return parse<T>(await this.redis.get(this.k(key)));
  }

  async getMany<T>(keys: readonly string[]): Promise<(T | null)[]> {
    if (keys.length === 0) return [];
    // One GET per key rather than MGET: keys of different owners live in different slots.
    return Promise.all(keys.map((key) => this.get<T>(key)));
  }

  async update<T, R>(key: string, change: (current: T | null) => { next?: T | null; result: R; ttlMs?: number }): Promise<R> {
    const full = this.k(key);
    for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
      const text = await this.redis.get(full);
      const outcome = change(parse<T>(text));
      if (outcome.next === undefined) return outcome.result;
      const next = outcome.next === null ? '' : JSON.stringify(outcome.next);
      if (await this.redis.pushCas(full, text ?? '', next, outcome.ttlMs ?? 0)) return outcome.result;
      // Another process wrote first: back off a little so two writers do not keep colliding.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, attempt * 2)));
    }
    throw new Error(`push state ${key}: too many concurrent updates`);
  }

  async set<T>(key: string, value: T, ttlMs?: number): Promise<void> {
    if (ttlMs) await this.redis.set(this.k(key), JSON.stringify(value), 'PX', ttlMs);
    else await this.redis.set(this.k(key), JSON.stringify(value));
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.k(key));
  }

  async setAdd(key: string, member: string): Promise<boolean> {
    return (await this.redis.sadd(this.k(key), member)) === 1;
  }

  async setRemove(key: string, member: string): Promise<void> {
    await this.redis.srem(this.k(key), member);
  }

  async setMembers(key: string): Promise<string[]> {
    return this.redis.smembers(this.k(key));
  }

  async schedule(key: string, member: string, atMs: number): Promise<void> {
    await this.redis.zadd(this.k(key), atMs, member);
  }

  async unschedule(key: string, member: string): Promise<void> {
    await this.redis.zrem(this.k(key), member);
  }

  async claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    return this.redis.pushClaim(this.k(key), nowMs, nowMs + leaseMs, limit);
  }

  async nextDue(key: string): Promise<number | null> {
    const first = await this.redis.zrange(this.k(key), '0', '0', 'WITHSCORES');
    return first.length === 2 ? Number(first[1]) : null;
  }

  async listPush(key: string, value: unknown, keep: number): Promise<void> {
    const full = this.k(key);
    await this.redis.multi().lpush(full, JSON.stringify(value)).ltrim(full, 0, keep - 1).exec();
  }

  async listRange<T>(key: string, count: number): Promise<T[]> {
    const items = await this.redis.lrange(this.k(key), 0, count - 1);
    return items.map((item) => JSON.parse(item) as T);
  }

  available(): boolean {
    return this.redis.status === 'ready';
  }

  async close(): Promise<void> {}
}
