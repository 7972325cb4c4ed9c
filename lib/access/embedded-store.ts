import { join } from 'node:path';
import type { PlanName, Plans } from '../config/index.ts';
import { AccessFiles } from './embedded-files.ts';
import { AccessState, type JournalEntry } from './embedded-state.ts';
import { AccessError, keyNotFound } from './errors.ts';
import { generateKey, hashKey, isWellFormedKey, keyPrefix } from './key-format.ts';
import { firstExceeded, limitOutcome, limitsOf, type ConsumeResult, type ConsumeTicket } from './limits.ts';
import {
  effectiveStatus, newKeyRecord, parseCreateKeyInput, renewedRecord, withNotice, withStatus,
  type CreateKeyInput, type KeyRecord, type KeyStatus, type Notice, type UsageCounters,
} from './record.ts';
import type { AccessStore, CreatedKey, TrialRequest } from './store.ts';
import { epochSecond, utcDay } from './time.ts';

export interface EmbeddedAccessStoreOptions {
  plans: Plans;
  /** The store's own directory, conventionally `<DATA_DIR>/access`. */
  dir: string;
  /** Journal entries between compactions into the snapshot. Default 10,000. */
  compactEvery?: number;
}

/** Conventional directory of the embedded store under DATA_DIR. */
export function embeddedAccessDir(dataDir: string): string {
  return join(dataDir, 'access');
}

/**
 * The in-process store for the single-process mode. Every operation decides and writes without
 * awaiting anything, so on Node's single thread each check-and-count is atomic.
 *
 * Persistence: each change is appended to a journal before it takes effect (key changes fsynced),
 * and compacted into a snapshot at open, every `compactEvery` entries and on close. A restart,
 * graceful or a crash of the process, loses no keys and no counted lookups. One process per
 * directory. Burst windows live in memory only: they are over long before a restart completes.
 */
export class EmbeddedAccessStore implements AccessStore {
  private readonly state: AccessState;
  private readonly files: AccessFiles;
  private readonly plans: Plans;
  private readonly compactEvery: number;
  private readonly bursts = new Map<string, { second: number; count: number }>();
  private closed = false;

  constructor(options: EmbeddedAccessStoreOptions) {
    this.plans = options.plans;
    this.compactEvery = options.compactEvery ?? 10_000;
    const { files, snapshot, entries } = AccessFiles.open(options.dir);
    this.state = snapshot ? AccessState.fromSnapshot(snapshot) : new AccessState();
    for (const entry of entries) this.state.apply(entry);
    this.files = files;
    this.files.compact((generation) => this.state.toSnapshot(generation));
  }

  /** Journal first, then memory: an entry that could not be written never takes effect. */
  private commit(entry: JournalEntry): void {
    if (this.closed) throw new Error('access store is closed');
    this.files.append(entry, entry.op !== 'count');
    this.state.apply(entry);
    if (this.files.appended >= this.compactEvery) this.files.compact((generation) => this.state.toSnapshot(generation));
  }

  async createKey(input: CreateKeyInput, now: Date): Promise<CreatedKey> {
    return this.create(input, now, false);
  }

  async issueTrial(request: TrialRequest, now: Date): Promise<CreatedKey> {
    return this.create({ plan: 'trial', mode: request.mode, email: request.email }, now, true);
  }

  private create(input: CreateKeyInput, now: Date, oncePerEmail: boolean): CreatedKey {
    const valid = parseCreateKeyInput(input);
    if (oncePerEmail && this.state.trialPrefix(valid.email) !== undefined) {
      throw new AccessError('trial_exists', 'A trial key was already issued to this e-mail address.');
    }
    let key = generateKey(valid.mode);
    while (this.state.byPrefix(keyPrefix(key)) || this.state.byHash.has(hashKey(key))) key = generateKey(valid.mode);
    const record = newKeyRecord(valid, key, this.plans, now);
    this.commit({ op: 'create', record });
    return { key, record };
  }

  async getByKey(key: string): Promise<KeyRecord | null> {
    if (!isWellFormedKey(key)) return null;
    return this.state.byHash.get(hashKey(key)) ?? null;
  }

  async getByPrefix(prefix: string): Promise<KeyRecord | null> {
    return this.state.byPrefix(prefix) ?? null;
  }

  private mustGet(prefix: string): KeyRecord {
    const record = this.state.byPrefix(prefix);
    if (!record) throw keyNotFound(prefix);
    return record;
  }

  async setStatus(prefix: string, status: KeyStatus): Promise<KeyRecord> {
    const record = this.mustGet(prefix);
    if (record.status === status) return record;
    const next = withStatus(record, status);
    this.commit({ op: 'put', record: next });
    return next;
  }

  async renew(prefix: string, plan: PlanName | undefined, now: Date): Promise<KeyRecord> {
    const next = renewedRecord(this.mustGet(prefix), this.plans, plan, now);
    this.commit({ op: 'put', record: next });
    return next;
  }

  async markNoticeSent(prefix: string, which: Notice, at: Date): Promise<boolean> {
    const next = withNotice(this.mustGet(prefix), which, at);
    if (next === null) return false;
    this.commit({ op: 'put', record: next });
    return true;
  }

  async usage(prefix: string, now: Date): Promise<UsageCounters> {
    const record = this.mustGet(prefix);
    const { period, daily } = this.state.counts(prefix, record.period_start, utcDay(now));
    return { lookupsUsed: period, dailyUsed: daily };
  }

  async list(): Promise<KeyRecord[]> {
    return [...this.state.byHash.values()]
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.prefix.localeCompare(b.prefix));
  }

  async findTrialByEmail(email: string): Promise<KeyRecord | null> {
    const prefix = this.state.trialPrefix(email);
    return prefix === undefined ? null : (this.state.byPrefix(prefix) ?? null);
  }

  async consume(record: KeyRecord, now: Date): Promise<ConsumeResult> {
    // The stored record decides, as in the Redis script: it may have changed since `record` was read.
    const stored = this.state.byHash.get(record.hash);
    if (!stored) return { ok: false, code: 'invalid_api_key' };
    const status = effectiveStatus(stored, now);
    if (status === 'expired') return { ok: false, code: 'payment_required' };
    if (status !== 'active') return { ok: false, code: 'invalid_api_key' };

    const day = utcDay(now);
    const second = epochSecond(now);
    const burst = this.bursts.get(stored.prefix);
    const burstUsed = burst?.second === second ? burst.count : 0;
    const { period, daily } = this.state.counts(stored.prefix, stored.period_start, day);
    const limits = limitsOf(stored);
    const refusal = firstExceeded(limits, { burst: burstUsed, daily, period });
    const ticket: ConsumeTicket = { prefix: stored.prefix, hash: stored.hash, periodStart: stored.period_start, day };
    if (refusal !== null) return limitOutcome(refusal, limits, { burst: burstUsed, daily, period }, now, ticket);

    this.commit({ op: 'count', prefix: stored.prefix, period_start: stored.period_start, day, delta: 1 });
    this.bursts.set(stored.prefix, { second, count: burstUsed + 1 });
    return limitOutcome(null, limits, { burst: burstUsed + 1, daily: daily + 1, period: period + 1 }, now, ticket);
  }

  async refund(ticket: ConsumeTicket): Promise<void> {
    const { period, daily } = this.state.counts(ticket.prefix, ticket.periodStart, ticket.day);
    // Nothing to give back (renewed since, or already refunded): write nothing either.
    if (period === 0 && daily === 0) return;
    this.commit({ op: 'count', prefix: ticket.prefix, period_start: ticket.periodStart, day: ticket.day, delta: -1 });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.files.compact((generation) => this.state.toSnapshot(generation));
    this.files.close();
    this.closed = true;
  }
}
