import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import { dispatchAtEndOfTurn } from '../batch/index.ts';
import { connectRedis, isCluster, type RedisClient } from '../redis/index.ts';
import type { PlanName, Plans } from '../config/index.ts';
import { AccessError, keyNotFound } from './errors.ts';
import { generateKey, hashKey, isWellFormedKey } from './key-format.ts';
import { batchOutcome, limitOutcome, limitsOf, type ConsumeResult, type ConsumeTicket, type LimitCode } from './limits.ts';
import {
  mailboxOf, newKeyRecord, parseCreateKeyInput, renewedRecord, withNotice, withStatus,
  type CreateKeyInput, type KeyRecord, type KeyStatus, type Notice, type UsageCounters,
} from './record.ts';
import { decodeRecord, encodeRecord } from './redis-codec.ts';
import { upgradeAccessLayout } from './redis-layout.ts';
import { CONSUME_LUA, CREATE_RECORD_LUA, DELETE_IF_LUA, RENEW_FOR_PAYMENT_LUA, REFUND_LUA, REPLACE_LUA } from './redis-scripts.ts';
import { CONSUME_BATCH_LUA } from './redis-batch-script.ts';
import type { AccessStore, Authorization, BatchAuthorization, CreatedKey, PaymentRenewal, TrialRequest } from './store.ts';
import type { KeyTransfer } from './transfer.ts';
import { epochSecond, toIso, utcDay } from './time.ts';

export interface RedisAccessStoreOptions {
  plans: Plans;
  /** A connection the caller owns (left open by `close()`), or a URL to open one the store owns. */
  redis: RedisClient | string;
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
  /**
   * The same script for groups of one key: its two keys, then the groups' arguments. A cluster
   * client routes (and auto-pipelines) a call by its first key, which a leading count would hide.
   */
  accessConsumeOfKey(rec: string, usage: string, ...argv: string[]): Promise<Reply[]>;
  accessRefund(usage: string, ...argv: string[]): Promise<number>;
  accessConsumeBatch(rec: string, usage: string, ...argv: string[]): Promise<Reply>;
  accessCreateRecord(rec: string, fieldsJson: string): Promise<number>;
  accessDeleteIf(key: string, expected: string): Promise<number>;
  accessReplace(rec: string, expectedJson: string, nextJson: string): Promise<number>;
  /** The same, deleting the usage hash too (a renewal). */
  accessReplaceDroppingUsage(rec: string, usage: string, expectedJson: string, nextJson: string): Promise<number>;
  accessRenewForPayment(rec: string, usage: string, paid: string, expectedJson: string, nextJson: string, paymentId: string): Promise<number>;
}
type ScriptedRedis = RedisClient & ScriptCommands;

const trialExists = () => new AccessError('trial_exists', 'A trial key was already issued to this e-mail address.');

/** Decoded key records remembered per process, reused while the stored fields stay the same. */
const DECODED_RECORDS = 10_000;
/** Prefix collisions (62^7 space) and concurrent admin edits are rare; a few attempts always suffice. */
const MAX_ATTEMPTS = 5;
/** Lookups answered by one CONSUME_LUA call at most. */
const MAX_ASKS_PER_CALL = 1_000;

/**
 * Key layout (all under the namespace; `{…}` is the Redis Cluster hash tag):
 *   key:{<sha256>}                                 hash    the key record (no plain key)
 *   usage:{<sha256>}                               hash    the key's counters, each with its window:
 *                                                          period_start/period_used, day/day_used,
 *                                                          burst_second/burst_used (deleted on renew)
 *   prefix:<key_prefix>                            string  → sha256
 *   keys                                           set     every sha256 (for list)
 *   paid:{<sha256>}                                set     payment ids that renewed the key (renewForPayment)
 *   trial:<mailbox (record.ts mailboxOf)>          string  → key_prefix of the first trial
 *   layout                                         string  the layout version (redis-layout.ts)
 *
 * Every script touches one slot: a key's record and usage share their hash tag, the other keys
 * are read and written one at a time. So one Redis and a Redis Cluster hold the same keys.
 *
 * The lookups read off the sockets in one event-loop turn make one script call (CONSUME_LUA; on a
 * cluster one per key hash): they are grouped by key and second, each group's two keys follow
 * from the presented key's hash, and the script counts each group's n lookups at once. Redis work
 * and client work per lookup then fall as load rises; the answers are the ones the lookups would
 * have got one after another (CONSUME_LUA says why).
 */
export class RedisAccessStore implements AccessStore {
  private readonly redis: ScriptedRedis;
  private readonly ownsConnection: boolean;
  private readonly ns: string;
  private readonly plans: Plans;
  /** On a cluster a script call may touch one slot only: one CONSUME_LUA call per key hash. */
  private readonly perKey: boolean;
  /** The layout upgrade of the namespace, run once before the store's first command. */
  private layout: Promise<unknown> | null = null;
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
    redis.defineCommand('accessConsumeOfKey', { numberOfKeys: 2, lua: CONSUME_LUA });
    redis.defineCommand('accessRefund', { numberOfKeys: 1, lua: REFUND_LUA });
    redis.defineCommand('accessConsumeBatch', { numberOfKeys: 2, lua: CONSUME_BATCH_LUA });
    redis.defineCommand('accessCreateRecord', { numberOfKeys: 1, lua: CREATE_RECORD_LUA });
    redis.defineCommand('accessDeleteIf', { numberOfKeys: 1, lua: DELETE_IF_LUA });
    redis.defineCommand('accessReplace', { numberOfKeys: 1, lua: REPLACE_LUA });
    redis.defineCommand('accessReplaceDroppingUsage', { numberOfKeys: 2, lua: REPLACE_LUA });
    redis.defineCommand('accessRenewForPayment', { numberOfKeys: 3, lua: RENEW_FOR_PAYMENT_LUA });
    this.redis = redis as ScriptedRedis;
    this.perKey = isCluster(redis);
  }

  // A key's record and usage carry its hash as the hash tag: one slot, so one script touches both.
  /**
   * Keys written by the previous layout are renamed (`upgradeAccessLayout`) before this store reads
   * or writes anything, once; after a failure (Redis unreachable) the next call tries again, so a
   * process may start while Redis is down.
   */
  private layoutReady(): Promise<unknown> {
    this.layout ??= upgradeAccessLayout(this.redis, this.ns).catch((err: unknown) => {
      this.layout = null;
      throw err;
    });
    return this.layout;
  }

  private recordKey(hash: string): string { return `${this.ns}key:{${hash}}`; }
  private prefixKey(prefix: string): string { return `${this.ns}prefix:${prefix}`; }
  private allKey(): string { return `${this.ns}keys`; }
  // By mailbox: plus-addressed and (Gmail) dotted spellings of one mailbox share one trial.
  private trialKey(email: string): string { return `${this.ns}trial:${mailboxOf(email)}`; }
  private usageKey(hash: string): string { return `${this.ns}usage:{${hash}}`; }
  private paidKey(hash: string): string { return `${this.ns}paid:{${hash}}`; }

  async createKey(input: CreateKeyInput, now: Date): Promise<CreatedKey> {
    return this.create(input, now, false);
  }

  async issueTrial(request: TrialRequest, now: Date): Promise<CreatedKey> {
    return this.create({ plan: 'trial', mode: request.mode, email: request.email }, now, true);
  }

  /**
   * A new key in four single-key steps, so it works on a cluster (the keys live in different
   * slots) as on one Redis; each step is atomic, the sequence is not:
   *   1. reserve the prefix (SET NX prefix → hash; taken: draw another key),
   *   2. write the record, unless one exists under that hash,
   *   3. for a trial key, claim the e-mail (SET NX trial → prefix); refused for a self-serve
   *      trial: undo 2 and 1, answer trial_exists (an operator's trial simply leaves the first),
   *   4. add the hash to the set of all keys (`list()`).
   * The key is returned only after step 4. A failure (Redis down, process killed) part way leaves
   * at most: a prefix pointing to no record (reads as unknown; the prefix is never drawn again),
   * a record nobody holds the plain key of and nothing points to by e-mail (it answers nothing,
   * and a retried self-serve trial succeeds because step 3 did not happen), or, after step 3, a
   * complete key missing from `list()` only. None of these refuses a later create.
   */
  private async create(input: CreateKeyInput, now: Date, oncePerEmail: boolean): Promise<CreatedKey> {
    const valid = parseCreateKeyInput(input);
    await this.layoutReady();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const key = generateKey(valid.mode);
      const record = newKeyRecord(valid, key, this.plans, now);
      if (oncePerEmail && (await this.redis.exists(this.trialKey(record.email))) === 1) throw trialExists();
      if ((await this.redis.set(this.prefixKey(record.prefix), record.hash, 'NX')) === null) continue;
      const written = await this.redis.accessCreateRecord(this.recordKey(record.hash), JSON.stringify(encodeRecord(record)));
      if (written === 0) {
        // The hash is taken (the same key drawn twice): give the prefix back and draw again.
        await this.redis.accessDeleteIf(this.prefixKey(record.prefix), record.hash);
        continue;
      }
      if (record.plan === 'trial') {
        const claimed = (await this.redis.set(this.trialKey(record.email), record.prefix, 'NX')) !== null;
        if (!claimed && oncePerEmail) {
          // Another self-serve trial of this e-mail won the race: this key was never handed out.
          await this.redis.del(this.recordKey(record.hash));
          await this.redis.accessDeleteIf(this.prefixKey(record.prefix), record.hash);
          throw trialExists();
        }
      }
      await this.redis.sadd(this.allKey(), record.hash);
      return { key, record };
    }
    throw new Error(`no free key prefix after ${MAX_ATTEMPTS} attempts`);
  }

  async getByKey(key: string): Promise<KeyRecord | null> {
    if (!isWellFormedKey(key)) return null;
    return this.getByHash(hashKey(key));
  }

  private async getByHash(hash: string): Promise<KeyRecord | null> {
    await this.layoutReady();
    return decodeRecord(await this.redis.hgetall(this.recordKey(hash)));
  }

  async getByPrefix(prefix: string): Promise<KeyRecord | null> {
    await this.layoutReady();
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
      const [expected, next] = [JSON.stringify(encodeRecord(before)), JSON.stringify(encodeRecord(after))];
      // A new period starts its counts from zero: the usage hash goes in the same step.
      const replaced = after.period_start !== before.period_start
        ? await this.redis.accessReplaceDroppingUsage(this.recordKey(before.hash), this.usageKey(before.hash), expected, next)
        : await this.redis.accessReplace(this.recordKey(before.hash), expected, next);
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

  async renewForPayment(prefix: string, paymentId: string, next: (current: KeyRecord) => KeyRecord | null): Promise<PaymentRenewal> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const before = await this.mustGet(prefix);
      // Applied ids are only ever added, so one seen here stays applied; the script checks again.
      if ((await this.redis.sismember(this.paidKey(before.hash), paymentId)) === 1) return { outcome: 'already_applied', record: before };
      const after = next(before);
      if (after === null) return { outcome: 'refused', record: before };
      const replaced = await this.redis.accessRenewForPayment(
        this.recordKey(before.hash), this.usageKey(before.hash), this.paidKey(before.hash),
        JSON.stringify(encodeRecord(before)), JSON.stringify(encodeRecord(after)), paymentId,
      );
      if (replaced === 1) return { outcome: 'renewed', record: after };
      if (replaced === 2) return { outcome: 'already_applied', record: await this.mustGet(prefix) };
      if (replaced === -1) throw keyNotFound(prefix);
    }
    throw new Error(`key ${prefix} kept changing during ${MAX_ATTEMPTS} renewal attempts`);
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
    await this.layoutReady();
    const hashes = await this.redis.smembers(this.allKey());
    const records = await Promise.all(hashes.map((h) => this.getByHash(h)));
    return records
      .filter((r): r is KeyRecord => r !== null)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.prefix.localeCompare(b.prefix));
  }

  /**
   * Writes a key carried over by `store move` as it was: its record, counters and applied payments
   * replaced in one MULTI on the key's slot, then its prefix, its place in `keys` and its trial
   * e-mail. Writing the same transfer twice leaves the same keys. Throws on a prefix that
   * names another key here.
   */
  async restoreKey(transfer: KeyTransfer): Promise<void> {
    await this.layoutReady();
    const { record, counter } = transfer;
    const owner = await this.redis.get(this.prefixKey(record.prefix));
    if (owner !== null && owner !== record.hash) throw new Error(`key prefix ${record.prefix} names another key in Redis`);
    const usage = counter
      ? { period_start: counter.period_start, period_used: String(counter.period_used), day: counter.day, day_used: String(counter.day_used) }
      : null;
    const step = this.redis.multi().del(this.recordKey(record.hash), this.usageKey(record.hash), this.paidKey(record.hash))
      .hset(this.recordKey(record.hash), encodeRecord(record));
    if (usage) step.hset(this.usageKey(record.hash), usage);
    if (transfer.payment_ids.length) step.sadd(this.paidKey(record.hash), ...transfer.payment_ids);
    await step.exec();
    await this.redis.set(this.prefixKey(record.prefix), record.hash);
    await this.redis.sadd(this.allKey(), record.hash);
    if (transfer.trial_of !== null) await this.redis.set(this.trialKey(transfer.trial_of), record.prefix);
    this.decoded.delete(record.hash);
  }

  async findTrialByEmail(email: string): Promise<KeyRecord | null> {
    await this.layoutReady();
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

  /** One script call per batch (CONSUME_BATCH_LUA): a batch is already many lookups in one ask. */
  async authorizeBatch(key: string, now: Date, lookups: number): Promise<BatchAuthorization> {
    if (!isWellFormedKey(key)) return { record: null, consumed: null };
    const hash = hashKey(key);
    await this.layoutReady();
    const reply = await this.redis.accessConsumeBatch(
      this.recordKey(hash), this.usageKey(hash), toIso(now.getTime()), utcDay(now), String(epochSecond(now)), String(lookups),
    );
    const verdict = reply[0] as string;
    if (verdict === 'missing') return { record: null, consumed: null };
    const fields = reply[1] as string[];
    const object: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) object[fields[i]!] = fields[i + 1]!;
    const record = decodeRecord(object);
    if (!record) throw new Error(`key record ${hash.slice(0, 12)}… is empty`);
    if (verdict === 'inactive') return { record, consumed: { ok: false, code: 'invalid_api_key' } };
    if (verdict === 'expired') return { record, consumed: { ok: false, code: 'payment_required' } };
    const [burst, daily, period, granted, burstRefused] = reply.slice(2, 7).map(Number) as [number, number, number, number, number];
    const ticket: ConsumeTicket = { prefix: record.prefix, hash, periodStart: record.period_start, day: utcDay(now) };
    return { record, consumed: batchOutcome(limitsOf(record), { burst, daily, period }, lookups, granted, burstRefused === 1, now, ticket) };
  }

  /** The asks of one turn, grouped by key and second (by key only for reads), in one script call. */
  private async answerAll(asks: readonly AccessAsk[]): Promise<Authorization[]> {
    await this.layoutReady();
    const groups = new Map<string, number[]>();
    asks.forEach((ask, i) => {
      const group = `${ask.hash} ${ask.count ? epochSecond(ask.now) : 'read'}`;
      const members = groups.get(group);
      if (members) members.push(i);
      else groups.set(group, [i]);
    });
    const indices = [...groups.values()];
    const authorizations = await this.consumeInCalls(indices.map((members) => members.map((i) => asks[i]!)));
    const answers = new Array<Authorization>(asks.length);
    indices.forEach((members, g) => members.forEach((i, j) => { answers[i] = authorizations[g]![j]!; }));
    return answers;
  }

  /**
   * One server: every group in one call. A cluster: one call per key hash (its groups share the
   * key's slot), sent together; the cluster client pipelines the calls bound for one node. A busy
   * key's lookups of a turn still make one call; many keys make one call each, as their keys lie
   * in different slots (two hashes share one of the 16,384 slots too rarely to group by slot).
   */
  private async consumeInCalls(groups: readonly (readonly AccessAsk[])[]): Promise<Authorization[][]> {
    if (!this.perKey) return this.consumeGroups(groups);
    const byHash = new Map<string, number[]>();
    groups.forEach((asks, g) => {
      const members = byHash.get(asks[0]!.hash);
      if (members) members.push(g);
      else byHash.set(asks[0]!.hash, [g]);
    });
    const answers = new Array<Authorization[]>(groups.length);
    await Promise.all([...byHash.values()].map(async (members) => {
      const replies = await this.consumeGroups(members.map((g) => groups[g]!));
      members.forEach((g, j) => { answers[g] = replies[j]!; });
    }));
    return answers;
  }

  /**
   * One CONSUME_LUA call for groups of asks (on a cluster, all of one key hash), each of one key (and, when counting, one second): per
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
    const replies = this.perKey
      ? await this.redis.accessConsumeOfKey(keys[0]!, keys[1]!, ...argv)
      : await this.redis.accessConsume(keys.length, ...keys, ...argv);
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
    await this.layoutReady();
    await this.redis.accessRefund(this.usageKey(ticket.hash), ticket.periodStart, ticket.day);
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.redis.quit();
  }
}
