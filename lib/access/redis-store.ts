import DataLoader from 'dataloader';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { dispatchAtEndOfTurn } from '../batch/index.ts';
import { connectRedis } from '../redis/index.ts';
import type { PlanName, Plans } from '../config/index.ts';
import { AccessError, keyNotFound } from './errors.ts';
import { generateKey, hashKey, isWellFormedKey } from './key-format.ts';
import { limitOutcome, limitsOf, type ConsumeResult, type ConsumeTicket, type LimitCode } from './limits.ts';
import {
  newKeyRecord, normalizeEmail, parseCreateKeyInput, renewedRecord, withNotice, withStatus,
  type CreateKeyInput, type KeyRecord, type KeyStatus, type Notice, type UsageCounters,
} from './record.ts';
import { decodeRecord, encodeRecord } from './redis-codec.ts';
import { CONSUME_LUA, CREATE_LUA, REFUND_LUA, REPLACE_LUA } from './redis-scripts.ts';
import type { AccessStore, Authorization, CreatedKey, TrialRequest } from './store.ts';
import { epochSecond, toIso, utcDay } from './time.ts';

export interface RedisAccessStoreOptions {
  plans: Plans;
  /** A connection the caller owns (left open by `close()`), or a URL to open one the store owns. */
  redis: Redis | string;
  /** Prefix of every Redis key this store touches. Default `trk:access:`. */
  namespace?: string;
}

type Reply = (string | number | string[])[];

/** One lookup's access step (see `authorize`), sent with every other of its event-loop turn. */
interface AccessAsk {
  hash: string;
  now: Date;
  count: boolean;
}
interface ScriptCommands {
  /** Variable number of keys (two per group): the count comes first. */
  accessConsume(numKeys: number, ...keysThenArgv: string[]): Promise<Reply[]>;
  accessRefund(usage: string, ...argv: string[]): Promise<number>;
  accessCreate(rec: string, prefixIdx: string, all: string, trialIdx: string, ...argv: string[]): Promise<string>;
  /** Variable number of keys: the count comes first. */
  accessReplace(numKeys: number, ...keysThenArgv: string[]): Promise<number>;
}
type ScriptedRedis = Redis & ScriptCommands;

/** Decoded key records remembered per process, reused while the stored fields stay the same. */
const DECODED_RECORDS = 10_000;
/** Prefix collisions (62^7 space) and concurrent admin edits are rare; a few attempts always suffice. */
const MAX_ATTEMPTS = 5;
/** Lookups answered by one CONSUME_LUA call at most. */
const MAX_ASKS_PER_CALL = 1_000;

/**
 * Key layout (all under the namespace):
 *   key:<sha256>                                   hash    the key record (no plain key)
 *   prefix:<key_prefix>                            string  → sha256
 *   keys                                           set     every sha256 (for list)
 *   trial:<normalized e-mail>                      string  → key_prefix of the first trial
 *   usage:<sha256>                                 hash    the key's counters, each with its window:
 *                                                          period_start/period_used, day/day_used,
 *                                                          burst_second/burst_used (deleted on renew)
 *
 * The lookups read off the sockets in one event-loop turn make one script call (CONSUME_LUA): they
 * are grouped by key and second, each group's two keys follow from the presented key's hash, and
 * the script counts each group's n lookups at once. Redis work and client work per lookup then fall
 * as load rises; the answers are the ones the lookups would have got one after another
 * (CONSUME_LUA says why).
 */
export class RedisAccessStore implements AccessStore {
  private readonly redis: ScriptedRedis;
  private readonly ownsConnection: boolean;
  private readonly ns: string;
  private readonly plans: Plans;
  /**
   * The last record decoded per key hash, with CONSUME_LUA's digest of its fields: the script sends
   * the fields again only when they changed (decoding them was most of a lookup's client work).
   */
  private readonly decoded = new LRUCache<string, { digest: string; record: KeyRecord }>({ max: DECODED_RECORDS });
  /**
   * Collects the asks of one event-loop turn, dispatched in its check phase (after the poll phase
   * has read every socket that had a request) together with the cache's reads.
   */
  private readonly asks = new DataLoader<AccessAsk, Authorization>((asks) => this.answerAll(asks), {
    cache: false,
    batchScheduleFn: dispatchAtEndOfTurn,
    // Bounds one script's run, during which Redis serves nobody else.
    maxBatchSize: MAX_ASKS_PER_CALL,
  });

  constructor(options: RedisAccessStoreOptions) {
    this.plans = options.plans;
    this.ns = options.namespace ?? 'trk:access:';
    this.ownsConnection = typeof options.redis === 'string';
    // Auto-pipelining: concurrent lookups' scripts share one socket write per event-loop turn.
    const redis = typeof options.redis === 'string' ? connectRedis(options.redis, { enableAutoPipelining: true }) : options.redis;
    redis.defineCommand('accessConsume', { lua: CONSUME_LUA });
    redis.defineCommand('accessRefund', { numberOfKeys: 1, lua: REFUND_LUA });
    redis.defineCommand('accessCreate', { numberOfKeys: 4, lua: CREATE_LUA });
    redis.defineCommand('accessReplace', { lua: REPLACE_LUA });
    this.redis = redis as ScriptedRedis;
  }

  private recordKey(hash: string): string { return `${this.ns}key:${hash}`; }
  private prefixKey(prefix: string): string { return `${this.ns}prefix:${prefix}`; }
  private allKey(): string { return `${this.ns}keys`; }
  private trialKey(email: string): string { return `${this.ns}trial:${normalizeEmail(email)}`; }
  private usageKey(hash: string): string { return `${this.ns}usage:${hash}`; }

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
      const drop = after.period_start !== before.period_start ? [this.usageKey(before.hash)] : [];
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
    const [periodStart, periodUsed, day, dayUsed] = await this.redis.hmget(this.usageKey(record.hash), 'period_start', 'period_used', 'day', 'day_used');
    // Counts of another window (an earlier period or day) read as zero, as in CONSUME_LUA.
    if (periodStart !== record.period_start) return { lookupsUsed: 0, dailyUsed: 0 };
    return { lookupsUsed: Number(periodUsed ?? 0), dailyUsed: day === utcDay(now) ? Number(dayUsed ?? 0) : 0 };
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

  async authorize(key: string, now: Date, count: boolean): Promise<Authorization> {
    if (!isWellFormedKey(key)) return { record: null, consumed: null };
    return this.asks.load({ hash: hashKey(key), now, count });
  }

  async consume(record: KeyRecord, now: Date): Promise<ConsumeResult> {
    return (await this.asks.load({ hash: record.hash, now, count: true })).consumed ?? { ok: false, code: 'invalid_api_key' };
  }

  /** The asks of one turn, grouped by key and second (by key only for reads), in one script call. */
  private async answerAll(asks: readonly AccessAsk[]): Promise<Authorization[]> {
    const groups = new Map<string, number[]>();
    asks.forEach((ask, i) => {
      const group = `${ask.hash} ${ask.count ? epochSecond(ask.now) : 'read'}`;
      const members = groups.get(group);
      if (members) members.push(i);
      else groups.set(group, [i]);
    });
    const indices = [...groups.values()];
    const authorizations = await this.consumeGroups(indices.map((members) => members.map((i) => asks[i]!)));
    const answers = new Array<Authorization>(asks.length);
    indices.forEach((members, g) => members.forEach((i, j) => { answers[i] = authorizations[g]![j]!; }));
    return answers;
  }

  /**
   * One CONSUME_LUA call for groups of asks, each of one key (and, when counting, one second): per
   * group, the stored record and, when counting, each ask's verdict, in the asks' order.
   */
  private async consumeGroups(groups: readonly (readonly AccessAsk[])[]): Promise<Authorization[][]> {
    const keys: string[] = [];
    const argv: string[] = [];
    const known = groups.map((asks) => {
      const { hash, count, now } = asks[0]!;
      const times = asks.map((ask) => ask.now.getTime());
      const [earliest, latest] = [Math.min(...times), Math.max(...times)];
      const earliestIso = toIso(earliest);
      const decoded = this.decoded.get(hash);
      keys.push(this.recordKey(hash), this.usageKey(hash));
      argv.push(
        earliestIso, latest === earliest ? earliestIso : toIso(latest), utcDay(now), String(epochSecond(now)),
        count ? String(asks.length) : '0', decoded?.digest ?? '',
      );
      return decoded;
    });
    const replies = await this.redis.accessConsume(keys.length, ...keys, ...argv);
    const answers = groups.map((asks, g) => this.authorizationsOf(asks, replies[g]!, known[g]));
    // The period ends among a group's asks (once per period at most): each alone is exact again.
    const split = groups.flatMap((asks, g) => (answers[g] === null ? asks.map((ask) => [ask]) : []));
    const again = split.length > 0 ? await this.consumeGroups(split) : [];
    let next = 0;
    return answers.map((answer, g) => answer ?? groups[g]!.map(() => again[next++]![0]!));
  }

  /** One group's reply as its asks' authorizations; null for 'split' (nothing was counted). */
  private authorizationsOf(asks: readonly AccessAsk[], reply: Reply, known: { digest: string; record: KeyRecord } | undefined): Authorization[] | null {
    const { hash, now } = asks[0]!;
    const verdict = reply[0] as string;
    if (verdict === 'missing') return asks.map(() => ({ record: null, consumed: null }));
    if (verdict === 'split') return null;
    const digest = reply[1] as string;
    const fields = reply[2] as string[];
    const record = fields.length === 0 && known?.digest === digest ? known.record : this.decode(hash, digest, fields);
    const refusedKey = (code: 'invalid_api_key' | 'payment_required') => asks.map(() => ({ record, consumed: { ok: false as const, code } }));
    if (verdict === 'read') return asks.map(() => ({ record, consumed: null }));
    if (verdict === 'inactive') return refusedKey('invalid_api_key');
    if (verdict === 'expired') return refusedKey('payment_required');
    const [burst, daily, period, granted] = reply.slice(3, 7).map(Number) as [number, number, number, number];
    const refusal = (reply[7] as string) === '' ? null : (reply[7] as LimitCode);
    const limits = limitsOf(record);
    const ticket: ConsumeTicket = { prefix: record.prefix, hash, periodStart: record.period_start, day: utcDay(now) };
    // The i-th ask sees what one-after-another counting would have shown it (CONSUME_LUA).
    return asks.map((ask, i) => {
      const counted = Math.min(i + 1, granted);
      const used = { burst: burst + counted, daily: daily + counted, period: period + counted };
      return { record, consumed: limitOutcome(i < granted ? null : refusal, limits, used, ask.now, ticket) };
    });
  }

  /** The record in HGETALL's flat [field, value, ...] form, remembered with the script's digest of it. */
  private decode(hash: string, digest: string, fields: string[]): KeyRecord {
    const object: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) object[fields[i]!] = fields[i + 1]!;
    const record = decodeRecord(object);
    if (!record) throw new Error(`key record ${hash.slice(0, 12)}… is empty`);
    this.decoded.set(hash, { digest, record });
    return record;
  }

  async refund(ticket: ConsumeTicket): Promise<void> {
    await this.redis.accessRefund(this.usageKey(ticket.hash), ticket.periodStart, ticket.day);
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.redis.quit();
  }
}
