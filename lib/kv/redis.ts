import { isCluster, type RedisClient } from '../redis/index.ts';
import { MAX_UPDATE_ATTEMPTS, type Kv, type Transaction } from './kv.ts';

/** Due members, each leased in the same step so two workers (dispatchers, runners) never take the same one. */
const CLAIM_LUA = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], member) end
return due
`;

/**
 * Several documents' compare-and-set in one step, with set adds and capped-list pushes.
 * KEYS: the documents read (r), the documents written (w), the sets (s), the lists (l).
 * ARGV: r w s l, then each read's expected text ('' = absent), each write's text ('' = delete) and
 * time to live (0 = none), each set member, each list item and its length kept. Answers {1} when
 * applied, or {0, current texts of the reads...} when one had changed (then nothing is applied):
 * the caller computes again from those without another read.
 */
const TRANSACT_LUA = `
local r, w, s, l = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local a = 4
local changed = false
local current = {}
for i = 1, r do
  local text = redis.call('GET', KEYS[i])
  if text == false then text = '' end
  current[i] = text
  if text ~= ARGV[a + i] then changed = true end
end
if changed then
  table.insert(current, 1, 0)
  return current
end
a = a + r
for i = 1, w do
  local key, text, ttl = KEYS[r + i], ARGV[a + 2 * i - 1], tonumber(ARGV[a + 2 * i])
  if text == '' then redis.call('DEL', key)
  elseif ttl > 0 then redis.call('SET', key, text, 'PX', ttl)
  else redis.call('SET', key, text) end
end
a = a + 2 * w
for i = 1, s do redis.call('SADD', KEYS[r + w + i], ARGV[a + i]) end
a = a + s
for i = 1, l do
  local key = KEYS[r + w + s + i]
  redis.call('LPUSH', key, ARGV[a + 2 * i - 1])
  redis.call('LTRIM', key, 0, tonumber(ARGV[a + 2 * i]) - 1)
end
return {1}
`;

/** A counter: INCR, and its expiry set when it is created, in one step. */
const INCREMENT_LUA = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
`;

/** Takes a member off a schedule only while its due time is still ARGV[2]. */
const UNSCHEDULE_IF_LUA = `
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if at and tonumber(at) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
`;

/** Documents' texts remembered per process (as last read or written) to skip the read before a write. */
const REMEMBERED = 20_000;
/**
 * A plain read remembers a text only up to this size: the documents read and then changed (queues,
 * endpoints, watches) are small, while events (several KB, read once per attempt and never changed)
 * would only fill the heap.
 */
const REMEMBERED_READ_CHARS = 4_096;

type ScriptedRedis = RedisClient & {
  kvClaim(key: string, nowMs: number, leaseUntilMs: number, limit: number): Promise<string[]>;
  kvTransact(numKeys: number, ...args: (string | number)[]): Promise<(number | string)[]>;
  kvUnscheduleIf(key: string, member: string, atMs: number): Promise<number>;
  kvIncrement(key: string, ttlMs: number): Promise<number>;
};

/** Key counts of the cluster's transact commands (a transact touches one API key's documents). */
const CLUSTER_TRANSACT_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256] as const;

/**
 * kvTransact on a cluster. ioredis 6 auto-pipelines a command to the node of its first argument,
 * which for a script with a variable key count is the count, not a key, and the call fails ("All
 * keys in the pipeline should belong to the same slots allocation group"; lib/redis/script.ts). So
 * the same script is defined with fixed key counts, and a call's keys are padded to the next count
 * by repeating its last key: the script reads only as many keys as its ARGV counts say, and all of
 * a transact's keys share one API key's hash tag, so the padding is in the same slot.
 */
function transactWithFixedKeyCounts(redis: RedisClient): ScriptedRedis['kvTransact'] {
  for (const size of CLUSTER_TRANSACT_SIZES) redis.defineCommand(`kvTransactKeys${size}`, { numberOfKeys: size, lua: TRANSACT_LUA });
  const callable = redis as unknown as Record<string, (...args: (string | number)[]) => Promise<(number | string)[]>>;
  return async (numKeys, ...args) => {
    const keys = args.slice(0, numKeys);
    const argv = args.slice(numKeys);
    const size = CLUSTER_TRANSACT_SIZES.find((n) => n >= keys.length);
    if (size === undefined) throw new Error(`kv: ${keys.length} keys in one step (at most ${CLUSTER_TRANSACT_SIZES.at(-1)} on a cluster)`);
    // Nothing to read or write: what the script answers for an empty step.
    if (keys.length === 0) return [1];
    while (keys.length < size) keys.push(keys[keys.length - 1]!);
    return callable[`kvTransactKeys${size}`]!(...keys, ...argv);
  };
}

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** The key-value store on Redis: every key under `namespace` (`trk:push:` for push; tests use their own). */
export class RedisKv implements Kv {
  private readonly redis: ScriptedRedis;

  private readonly namespace: string;
  constructor(redis: RedisClient, namespace: string) {
    this.namespace = namespace;
    redis.defineCommand('kvClaim', { numberOfKeys: 1, lua: CLAIM_LUA });
    redis.defineCommand('kvTransact', { lua: TRANSACT_LUA });
    redis.defineCommand('kvUnscheduleIf', { numberOfKeys: 1, lua: UNSCHEDULE_IF_LUA });
    redis.defineCommand('kvIncrement', { numberOfKeys: 1, lua: INCREMENT_LUA });
    this.redis = redis as ScriptedRedis;
    if (isCluster(redis)) this.redis.kvTransact = transactWithFixedKeyCounts(redis);
  }

  private k(key: string): string {
    return this.namespace + key;
  }

  /**
   * Texts ('' = absent) of documents as this process last read or wrote them, most recent last.
   * Only a guess at what Redis holds: a write compares with it and is refused if it is out of date.
   */
  private readonly remembered = new Map<string, string>();

  private remember(fullKey: string, text: string): void {
    this.remembered.delete(fullKey);
    this.remembered.set(fullKey, text);
    if (this.remembered.size > REMEMBERED) this.remembered.delete(this.remembered.keys().next().value!);
  }

  /**
   * Large documents (an analysis' chunks of 200 shipments, events) are not kept: 20,000 remembered
   * texts of tens of KB would hold hundreds of MB. A later write of one costs a read first.
   */
  private rememberIfSmall(fullKey: string, text: string): void {
    if (text.length <= REMEMBERED_READ_CHARS) this.remember(fullKey, text);
    else this.remembered.delete(fullKey);
  }

  async get<T>(key: string): Promise<T | null> {
    const full = this.k(key);
    const text = await this.redis.get(full);
    if (text === null || text.length <= REMEMBERED_READ_CHARS) this.remember(full, text ?? '');
    else this.remembered.delete(full);
    return parse<T>(text);
  }

  async getMany<T>(keys: readonly string[]): Promise<(T | null)[]> {
    if (keys.length === 0) return [];
    // One GET per key rather than MGET: keys of different owners live in different slots.
    return Promise.all(keys.map((key) => this.get<T>(key)));
  }

  async update<T, R>(key: string, change: (current: T | null) => { next?: T | null; result: R; ttlMs?: number }): Promise<R> {
    return this.transact([key], ([current]) => {
      const outcome = change(current as T | null);
      return { writes: outcome.next === undefined ? [] : [{ key, value: outcome.next, ttlMs: outcome.ttlMs }], result: outcome.result };
    });
  }

  async transact<R>(keys: readonly string[], change: (current: unknown[]) => Transaction<R>): Promise<R> {
    const reads = keys.map((key) => this.k(key));
    // A document never seen is guessed absent: wrong, it costs what a read first would have.
    let texts = reads.map((full) => this.remembered.get(full) ?? '');
    let verified = false;
    for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
      let step: Transaction<R>;
      try {
        step = change(texts.map((text) => (text === '' ? null : JSON.parse(text) as unknown)));
      } catch (err) {
        // `change` may rightly count on what its caller knows exists: a guess is no ground to fail.
        if (verified) throw err;
        texts = await Promise.all(reads.map(async (full) => (await this.redis.get(full)) ?? ''));
        verified = true;
        continue;
      }
      const writes = (step.writes ?? []).map((w) => ({ full: this.k(w.key), text: w.value === null ? '' : JSON.stringify(w.value), ttlMs: w.ttlMs ?? 0 }));
      const sets = step.setAdds ?? [];
      const lists = step.listPushes ?? [];
      const answer = await this.redis.kvTransact(
        reads.length + writes.length + sets.length + lists.length,
        ...reads, ...writes.map((w) => w.full), ...sets.map((a) => this.k(a.key)), ...lists.map((p) => this.k(p.key)),
        reads.length, writes.length, sets.length, lists.length,
        ...texts, ...writes.flatMap((w) => [w.text, w.ttlMs]), ...sets.map((a) => a.member), ...lists.flatMap((p) => [JSON.stringify(p.value), p.keep]),
      );
      if (answer[0] === 1) {
        reads.forEach((full, i) => this.rememberIfSmall(full, texts[i]!));
        for (const w of writes) this.rememberIfSmall(w.full, w.text);
        return step.result;
      }
      // Another writer was first, or what this process saw last was out of date: compute again from
      // what is there now. Writers that keep colliding back off a little so they do not keep doing so.
      if (verified) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, attempt * 2)));
      texts = answer.slice(1).map(String);
      verified = true;
      reads.forEach((full, i) => this.rememberIfSmall(full, texts[i]!));
    }
    throw new Error(`kv ${keys.join(', ')}: too many concurrent updates`);
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    const full = this.k(key);
    this.remembered.delete(full);
    return Number(await this.redis.kvIncrement(full, ttlMs));
  }

  async set<T>(key: string, value: T, ttlMs?: number): Promise<void> {
    const full = this.k(key);
    const text = JSON.stringify(value);
    if (ttlMs) await this.redis.set(full, text, 'PX', ttlMs);
    else await this.redis.set(full, text);
    this.rememberIfSmall(full, text);
  }

  async delete(key: string): Promise<void> {
    const full = this.k(key);
    await this.redis.del(full);
    this.remember(full, '');
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

  async unscheduleIf(key: string, member: string, atMs: number): Promise<boolean> {
    return (await this.redis.kvUnscheduleIf(this.k(key), member, atMs)) === 1;
  }

  async claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    return this.redis.kvClaim(this.k(key), nowMs, nowMs + leaseMs, limit);
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
