import { Redis } from 'ioredis';
import type { PlanName, Plans } from '../config/index.ts';
import { AccessError, keyNotFound } from './errors.ts';
import { generateKey, hashKey, isWellFormedKey } from './key-format.ts';
import { limitOutcome, type Allowance, type ConsumeResult, type ConsumeTicket, type LimitCode } from './limits.ts';
import {
  newKeyRecord, normalizeEmail, parseCreateKeyInput, renewedRecord, withNotice, withStatus,
  type CreateKeyInput, type KeyRecord, type KeyStatus, type Notice, type UsageCounters,
} from './record.ts';
import { decodeRecord, encodeRecord } from './redis-codec.ts';
import { CONSUME_LUA, CREATE_LUA, REFUND_LUA, REPLACE_LUA } from './redis-scripts.ts';
import type { AccessStore, CreatedKey, TrialRequest } from './store.ts';
import { msToNextUtcMidnight, utcDay, epochSecond } from './time.ts';

export interface RedisAccessStoreOptions {
  plans: Plans;
  /** A connection the caller owns (left open by `close()`), or a URL to open one the store owns. */
  redis: Redis | string;
  /** Prefix of every Redis key this store touches. Default `trk:access:`. */
  namespace?: string;
}

type Reply = (string | number | null)[];
interface ScriptCommands {
  accessConsume(rec: string, period: string, daily: string, burst: string, ...argv: string[]): Promise<Reply>;
  accessRefund(period: string, daily: string): Promise<number>;
  accessCreate(rec: string, prefixIdx: string, all: string, trialIdx: string, ...argv: string[]): Promise<string>;
  /** Variable number of keys: the count comes first. */
  accessReplace(numKeys: number, ...keysThenArgv: string[]): Promise<number>;
}
type ScriptedRedis = Redis & ScriptCommands;

/** The burst counter outlives its one-second window a little so a refund or read near its end finds it. */
const BURST_TTL_MS = 2_000;
/** The daily counter is kept an hour past its UTC day for the same reason. */
const DAILY_GRACE_MS = 3_600_000;
/** Prefix collisions (62^7 space) and concurrent admin edits are rare; a few attempts always suffice. */
const MAX_ATTEMPTS = 5;

/**
 * Key layout (all under the namespace):
 *   key:<sha256>                                   hash    the key record (no plain key)
 *   prefix:<key_prefix>                            string  → sha256
 *   keys                                           set     every sha256 (for list)
 *   trial:<normalized e-mail>                      string  → key_prefix of the first trial
 *   period:<key_prefix>:<period start ms>          counter lookups of that period, deleted on renew
 *   daily:<key_prefix>:<period start ms>:<day>     counter lookups of that UTC day, TTL to midnight + 1 h
 *   burst:<key_prefix>:<unix second>               counter requests of that second, TTL 2 s
 */
export class RedisAccessStore implements AccessStore {
  private readonly redis: ScriptedRedis;
  private readonly ownsConnection: boolean;
  private readonly ns: string;
  private readonly plans: Plans;

  constructor(options: RedisAccessStoreOptions) {
    this.plans = options.plans;
    this.ns = options.namespace ?? 'trk:access:';
    this.ownsConnection = typeof options.redis === 'string';
    const redis = typeof options.redis === 'string' ? new Redis(options.redis) : options.redis;
    redis.defineCommand('accessConsume', { numberOfKeys: 4, lua: CONSUME_LUA });
    redis.defineCommand('accessRefund', { numberOfKeys: 2, lua: REFUND_LUA });
    redis.defineCommand('accessCreate', { numberOfKeys: 4, lua: CREATE_LUA });
    redis.defineCommand('accessReplace', { lua: REPLACE_LUA });
    this.redis = redis as ScriptedRedis;
  }

  private recordKey(hash: string): string { return `${this.ns}key:${hash}`; }
  private prefixKey(prefix: string): string { return `${this.ns}prefix:${prefix}`; }
  private allKey(): string { return `${this.ns}keys`; }
  private trialKey(email: string): string { return `${this.ns}trial:${normalizeEmail(email)}`; }
  private periodKey(prefix: string, periodStart: string): string {
    return `${this.ns}period:${prefix}:${Date.parse(periodStart)}`;
  }
  private dailyKey(prefix: string, periodStart: string, day: string): string {
    return `${this.ns}daily:${prefix}:${Date.parse(periodStart)}:${day}`;
  }
  private burstKey(prefix: string, now: Date): string { return `${this.ns}burst:${prefix}:${epochSecond(now)}`; }

  async createKey(input: CreateKeyInput, now: Date): Promise<CreatedKey> {
    return this.create(input, now, false);
  }

  async issueTrial(request: TrialRequest, now: Date): Promise<CreatedKey> {
    return this.create({ plan: 'trial', mode: request.mode, email: request.email }, now, true);
  }

  private async create(input: CreateKeyInput, now: Date, oncePerEmail: boolean): Promise<CreatedKey> {
    const valid = parseCreateKeyInput(input);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const key = generateKey(valid.mode);
      const record = newKeyRecord(valid, key, this.plans, now);
      const reply = await this.redis.accessCreate(
        this.recordKey(record.hash), this.prefixKey(record.prefix), this.allKey(), this.trialKey(record.email),
        oncePerEmail ? '1' : '0', record.plan === 'trial' ? '1' : '0', record.prefix, record.hash,
        JSON.stringify(encodeRecord(record)),
      );
      if (reply === 'ok') return { key, record };
      if (reply === 'trial_exists') throw new AccessError('trial_exists', 'A trial key was already issued to this e-mail address.');
    }
    throw new Error(`no free key prefix after ${MAX_ATTEMPTS} attempts`);
  }

  async getByKey(key: string): Promise<KeyRecord | null> {
    if (!isWellFormedKey(key)) return null;
    return this.getByHash(hashKey(key));
  }

  private async getByHash(hash: string): Promise<KeyRecord | null> {
    return decodeRecord(await this.redis.hgetall(this.recordKey(hash)));
  }

  async getByPrefix(prefix: string): Promise<KeyRecord | null> {
    const hash = await this.redis.get(this.prefixKey(prefix));
    return hash === null ? null : this.getByHash(hash);
  }

  private async mustGet(prefix: string): Promise<KeyRecord> {
    const record = await this.getByPrefix(prefix);
    if (!record) throw keyNotFound(prefix);
    return record;
  }

  /**
   * Read → decide with the pure rules → compare-and-set, again if another process changed the key
   * in between. `change` returns null when nothing is to be written.
   */
  private async update(prefix: string, change: (record: KeyRecord) => KeyRecord | null): Promise<{ record: KeyRecord; changed: boolean }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const before = await this.mustGet(prefix);
      const after = change(before);
      if (after === null) return { record: before, changed: false };
      const drop = after.period_start !== before.period_start ? [this.periodKey(prefix, before.period_start)] : [];
      const replaced = await this.redis.accessReplace(
        1 + drop.length, this.recordKey(before.hash), ...drop,
        JSON.stringify(encodeRecord(before)), JSON.stringify(encodeRecord(after)),
      );
      if (replaced === 1) return { record: after, changed: true };
      if (replaced === -1) throw keyNotFound(prefix);
    }
    throw new Error(`key ${prefix} kept changing during ${MAX_ATTEMPTS} update attempts`);
  }

  async setStatus(prefix: string, status: KeyStatus): Promise<KeyRecord> {
    return (await this.update(prefix, (r) => (r.status === status ? null : withStatus(r, status)))).record;
  }

  async renew(prefix: string, plan: PlanName | undefined, now: Date): Promise<KeyRecord> {
    return (await this.update(prefix, (r) => renewedRecord(r, this.plans, plan, now))).record;
  }

  async markNoticeSent(prefix: string, which: Notice, at: Date): Promise<boolean> {
    return (await this.update(prefix, (r) => withNotice(r, which, at))).changed;
  }

  async usage(prefix: string, now: Date): Promise<UsageCounters> {
    const record = await this.mustGet(prefix);
    const [period, daily] = await this.redis.mget(
      this.periodKey(prefix, record.period_start), this.dailyKey(prefix, record.period_start, utcDay(now)),
    );
    return { lookupsUsed: Number(period ?? 0), dailyUsed: Number(daily ?? 0) };
  }

  async list(): Promise<KeyRecord[]> {
    const hashes = await this.redis.smembers(this.allKey());
    const records = await Promise.all(hashes.map((h) => this.getByHash(h)));
    return records
      .filter((r): r is KeyRecord => r !== null)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.prefix.localeCompare(b.prefix));
  }

  async findTrialByEmail(email: string): Promise<KeyRecord | null> {
    const prefix = await this.redis.get(this.trialKey(email));
    return prefix === null ? null : this.getByPrefix(prefix);
  }

  async consume(record: KeyRecord, now: Date): Promise<ConsumeResult> {
    let periodStart = record.period_start;
    // A renewal between reading the key and this call moves the period; retry with the stored one.
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const ticket: ConsumeTicket = { prefix: record.prefix, hash: record.hash, periodStart, day: utcDay(now) };
      const reply = await this.redis.accessConsume(
        this.recordKey(record.hash), this.periodKey(record.prefix, periodStart),
        this.dailyKey(record.prefix, periodStart, ticket.day), this.burstKey(record.prefix, now),
        periodStart, now.toISOString(), String(BURST_TTL_MS), String(msToNextUtcMidnight(now) + DAILY_GRACE_MS),
      );
      const [verdict] = reply;
      if (verdict === 'missing' || verdict === 'inactive') return { ok: false, code: 'invalid_api_key' };
      if (verdict === 'expired') return { ok: false, code: 'payment_required' };
      if (verdict === 'stale') {
        periodStart = String(reply[1]);
        continue;
      }
      const [burstLimit, dailyLimit, periodLimit, burstUsed, dailyUsed, periodUsed] = reply.slice(1).map(Number) as number[];
      const limits: Allowance = { burst: burstLimit!, daily: dailyLimit!, period: periodLimit! };
      const used: Allowance = { burst: burstUsed!, daily: dailyUsed!, period: periodUsed! };
      return limitOutcome(verdict === 'ok' ? null : (verdict as LimitCode), limits, used, now, ticket);
    }
    throw new Error(`key ${record.prefix} was renewed during ${MAX_ATTEMPTS} consume attempts`);
  }

  async refund(ticket: ConsumeTicket): Promise<void> {
    await this.redis.accessRefund(
      this.periodKey(ticket.prefix, ticket.periodStart), this.dailyKey(ticket.prefix, ticket.periodStart, ticket.day),
    );
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.redis.quit();
  }
}
