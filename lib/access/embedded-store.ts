import { join } from 'node:path';
import { dispatchAtEndOfTurn } from '../batch/index.ts';
import type { PlanName, Plans } from '../config/index.ts';
import { Journal } from '../kv/index.ts';
import { PendingCounts } from './embedded-pending.ts';
import { AccessState, JournalEntrySchema, SnapshotSchema, type JournalEntry } from './embedded-state.ts';
import { AccessError, keyNotFound } from './errors.ts';
import { generateKey, hashKey, isWellFormedKey, keyPrefix } from './key-format.ts';
import {
  batchGrant, batchOutcome, firstExceeded, limitOutcome, limitsOf, type BatchConsumeResult, type ConsumeResult, type ConsumeTicket,
} from './limits.ts';
import {
  effectiveStatus, newKeyRecord, periodNotStarted, parseCreateKeyInput, renewedRecord, withNotice, withStatus,
  type CreateKeyInput, type KeyRecord, type KeyStatus, type Notice, type UsageCounters,
} from './record.ts';
import type { AccessStore, Authorization, BatchAuthorization, CreatedKey, PaymentRenewal, TrialRequest } from './store.ts';
import type { KeyTransfer } from './transfer.ts';
import { epochSecond, utcDay } from './time.ts';

export interface EmbeddedAccessStoreOptions {
  plans: Plans;
  /** The store's own directory, conventionally `<DATA_DIR>/access`. */
  dir: string;
  /**
   * Journal entries between compactions into the snapshot. Default 50,000 (a few MiB of journal;
   * a compaction fsyncs twice and stalls every request meanwhile, so it should be rare).
   */
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
 *
 * Counted lookups are group-committed: a granted lookup counts against the limits at once (pending)
 * and its `consume` resolves once the journal holds it, written together with every other lookup
 * granted in the same turn of the event loop (one write instead of one per lookup, measured with
 * `npm run bench -- api`). A lookup is never answered before it is journaled; if the write fails,
 * the whole group is refused with the error and none of it takes effect.
 */
export class EmbeddedAccessStore implements AccessStore {
  private readonly state: AccessState;
  /** `snapshot.json` and `journal-<generation>.ndjson` (lib/kv/journal.ts). */
  private readonly files: Journal<JournalEntry>;
  private readonly plans: Plans;
  private readonly compactEvery: number;
  private readonly bursts = new Map<string, { second: number; count: number }>();
  private readonly pending = new PendingCounts();
  /** Settles the lookups of the pending group once they are written (or not). */
  private groupCommit: { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } | null = null;
  private closed = false;

  constructor(options: EmbeddedAccessStoreOptions) {
    this.plans = options.plans;
    this.compactEvery = options.compactEvery ?? 50_000;
    const { journal, snapshot, entries } = Journal.open(options.dir, { parse: (value) => JournalEntrySchema.parse(value) });
    this.state = snapshot ? AccessState.fromSnapshot(SnapshotSchema.parse(snapshot)) : new AccessState();
    for (const entry of entries) this.state.apply(entry);
    this.files = journal;
    this.files.compact((generation) => this.state.toSnapshot(generation));
  }

  /**
   * Journal first, then memory: an entry that could not be written never takes effect. Pending
   * lookups are written first, so journal order is decision order (a refund never precedes its count).
   */
  private commit(entry: JournalEntry): void {
    this.writePending();
    this.journal([entry]);
  }

  private journal(entries: readonly JournalEntry[]): void {
    if (this.closed) throw new Error('access store is closed');
    this.files.append(entries, entries.some((e) => e.op !== 'count'));
    for (const entry of entries) this.state.apply(entry);
    // Never with lookups pending: the snapshot would hold what the next group writes again.
    if (this.files.appended >= this.compactEvery) this.files.compact((generation) => this.state.toSnapshot(generation));
  }

  /** Counts granted lookups now; resolves once they are in the journal (see the class comment). */
  private countLookup(prefix: string, periodStart: string, day: string, n = 1): Promise<void> {
    if (this.closed) return Promise.reject(new Error('access store is closed'));
    this.pending.add(prefix, periodStart, day, n);
    if (!this.groupCommit) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
      this.groupCommit = { promise, resolve, reject };
      // After every request read in this turn of the event loop has been decided.
      dispatchAtEndOfTurn(() => this.writePending());
    }
    return this.groupCommit.promise;
  }

  private writePending(): void {
    const group = this.groupCommit;
    this.groupCommit = null;
    if (this.pending.isEmpty) {
      group?.resolve();
      return;
    }
    try {
      this.journal(this.pending.take());
    } catch (err) {
      group?.reject(err);
      return;
    }
    group?.resolve();
  }

  /** Journaled counts plus pending ones. */
  private counts(prefix: string, periodStart: string, day: string): { period: number; daily: number } {
    const written = this.state.counts(prefix, periodStart, day);
    if (this.pending.isEmpty) return written;
    const pending = this.pending.counts(prefix, periodStart, day);
    return { period: written.period + pending.period, daily: written.daily + pending.daily };
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

  async authorize(key: string, now: Date, count: boolean): Promise<Authorization> {
    const record = await this.getByKey(key);
    return { record, consumed: record && count ? await this.consume(record, now) : null };
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

  async renewForPayment(prefix: string, paymentId: string, next: (current: KeyRecord) => KeyRecord | null): Promise<PaymentRenewal> {
    const current = this.mustGet(prefix);
    if (this.state.paymentApplied(prefix, paymentId)) return { outcome: 'already_applied', record: current };
    const renewed = next(current);
    if (renewed === null) return { outcome: 'refused', record: current };
    // Decided and written without awaiting: nothing else runs in between on this one thread.
    this.commit({ op: 'put', record: renewed, payment_id: paymentId });
    return { outcome: 'renewed', record: renewed };
  }

  async markNoticeSent(prefix: string, which: Notice, at: Date): Promise<boolean> {
    const next = withNotice(this.mustGet(prefix), which, at);
    if (next === null) return false;
    this.commit({ op: 'put', record: next });
    return true;
  }

  async usage(prefix: string, now: Date): Promise<UsageCounters> {
    const record = this.mustGet(prefix);
    const { period, daily } = this.counts(prefix, record.period_start, utcDay(now));
    return { lookupsUsed: period, dailyUsed: daily };
  }

  async list(): Promise<KeyRecord[]> {
    return [...this.state.byHash.values()]
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.prefix.localeCompare(b.prefix));
  }

  /** Every key as `store move` carries it to Redis (lookups granted so far written first). */
  async transfers(): Promise<KeyTransfer[]> {
    this.writePending();
    return this.state.transfers();
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
    if (periodNotStarted(stored, now)) return { ok: false, code: 'payment_required' };

    const day = utcDay(now);
    const second = epochSecond(now);
    const burst = this.bursts.get(stored.prefix);
    const burstUsed = burst?.second === second ? burst.count : 0;
    const { period, daily } = this.counts(stored.prefix, stored.period_start, day);
    const limits = limitsOf(stored);
    const refusal = firstExceeded(limits, { burst: burstUsed, daily, period });
    const ticket: ConsumeTicket = { prefix: stored.prefix, hash: stored.hash, periodStart: stored.period_start, day };
    if (refusal !== null) return limitOutcome(refusal, limits, { burst: burstUsed, daily, period }, now, ticket);

    const written = this.countLookup(stored.prefix, stored.period_start, day);
    this.bursts.set(stored.prefix, { second, count: burstUsed + 1 });
    await written;
    return limitOutcome(null, limits, { burst: burstUsed + 1, daily: daily + 1, period: period + 1 }, now, ticket);
  }

  async authorizeBatch(key: string, now: Date, lookups: number): Promise<BatchAuthorization> {
    const record = await this.getByKey(key);
    return { record, consumed: record ? await this.consumeBatch(record, now, lookups) : null };
  }

  /** The batch rule of `batchGrant`, decided without awaiting (atomic on Node's one thread). */
  private async consumeBatch(record: KeyRecord, now: Date, n: number): Promise<BatchConsumeResult> {
    const stored = this.state.byHash.get(record.hash);
    if (!stored) return { ok: false, code: 'invalid_api_key' };
    const status = effectiveStatus(stored, now);
    if (status === 'expired') return { ok: false, code: 'payment_required' };
    if (status !== 'active') return { ok: false, code: 'invalid_api_key' };
    if (periodNotStarted(stored, now)) return { ok: false, code: 'payment_required' };

    const day = utcDay(now);
    const second = epochSecond(now);
    const burst = this.bursts.get(stored.prefix);
    const burstUsed = burst?.second === second ? burst.count : 0;
    const { period, daily } = this.counts(stored.prefix, stored.period_start, day);
    const limits = limitsOf(stored);
    const before = { burst: burstUsed, daily, period };
    const { burstRefused, granted } = batchGrant(limits, before, n);
    const ticket: ConsumeTicket = { prefix: stored.prefix, hash: stored.hash, periodStart: stored.period_start, day };
    if (!burstRefused) {
      this.bursts.set(stored.prefix, { second, count: burstUsed + 1 });
      if (granted > 0) await this.countLookup(stored.prefix, stored.period_start, day, granted);
    }
    return batchOutcome(limits, before, n, granted, burstRefused, now, ticket);
  }

  async refund(ticket: ConsumeTicket): Promise<void> {
    const { period, daily } = this.counts(ticket.prefix, ticket.periodStart, ticket.day);
    // Nothing to give back (renewed since, or already refunded): write nothing either.
    if (period === 0 && daily === 0) return;
    this.commit({ op: 'count', prefix: ticket.prefix, period_start: ticket.periodStart, day: ticket.day, delta: -1 });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.writePending();
    this.files.compact((generation) => this.state.toSnapshot(generation));
    this.files.close();
    this.closed = true;
  }
}
