import { z } from 'zod';
import { UtcMillis } from '../schemas/index.ts';
import { KeyRecordSchema, mailboxOf, type KeyRecord } from './record.ts';
import type { KeyTransfer } from './transfer.ts';

/**
 * Every change of the embedded store is one journal entry; the live state and a replay after a
 * restart apply the same entries with the same code, so they cannot disagree.
 */
export const JournalEntrySchema = z.discriminatedUnion('op', [
  /** A new key; a trial also claims its e-mail in the trial index (first trial wins). */
  z.object({ op: z.literal('create'), record: KeyRecordSchema }),
  /**
   * A changed key (status, renewal, notices). A paid renewal names its payment id: the renewal and
   * the record that this payment was applied are one entry, so a crash keeps both or neither.
   */
  z.object({ op: z.literal('put'), record: KeyRecordSchema, payment_id: z.string().min(1).optional() }),
  /**
   * Lookups counted (delta n > 0: the n lookups of one group commit) or one refunded (-1) in the
   * named period and UTC day.
   */
  z.object({
    op: z.literal('count'), prefix: z.string(), period_start: UtcMillis,
    day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), delta: z.union([z.literal(-1), z.number().int().positive()]),
  }),
]);
export type JournalEntry = z.infer<typeof JournalEntrySchema>;
export type CountEntry = Extract<JournalEntry, { op: 'count' }>;

const CounterSchema = z.object({
  prefix: z.string(),
  period_start: UtcMillis,
  period_used: z.number().int().nonnegative(),
  day: z.string(),
  day_used: z.number().int().nonnegative(),
});
type Counter = z.infer<typeof CounterSchema>;

export const SnapshotSchema = z.object({
  version: z.literal(1),
  /** Which journal file continues this snapshot (lib/kv/journal.ts writes it). */
  generation: z.number().int().nonnegative(),
  keys: z.array(KeyRecordSchema),
  trials: z.record(z.string(), z.string()),
  counters: z.array(CounterSchema),
  /** Per key prefix, the payment ids that renewed it (absent in snapshots written before them). */
  payments_applied: z.record(z.string(), z.array(z.string())).optional(),
});
export type Snapshot = z.infer<typeof SnapshotSchema>;

/** Keys and lookup counters in memory. Pure: no I/O, no clock. */
export class AccessState {
  readonly byHash = new Map<string, KeyRecord>();
  private readonly hashByPrefix = new Map<string, string>();
  private readonly trials = new Map<string, string>();
  /** Per key prefix, only the current period and the latest day are kept: older ones are over. */
  private readonly counters = new Map<string, Counter>();
  /** Per key prefix, the payment ids applied to it (`renewForPayment`). */
  private readonly paid = new Map<string, Set<string>>();

  static fromSnapshot(snapshot: Snapshot): AccessState {
    const state = new AccessState();
    for (const record of snapshot.keys) state.putRecord(record);
    for (const [email, prefix] of Object.entries(snapshot.trials)) state.trials.set(email, prefix);
    for (const counter of snapshot.counters) state.counters.set(counter.prefix, { ...counter });
    for (const [prefix, ids] of Object.entries(snapshot.payments_applied ?? {})) state.paid.set(prefix, new Set(ids));
    return state;
  }

  toSnapshot(generation: number): Snapshot {
    return {
      version: 1,
      generation,
      keys: [...this.byHash.values()],
      trials: Object.fromEntries(this.trials),
      counters: [...this.counters.values()],
      payments_applied: Object.fromEntries([...this.paid].map(([prefix, ids]) => [prefix, [...ids]])),
    };
  }

  apply(entry: JournalEntry): void {
    if (entry.op === 'create') {
      this.putRecord(entry.record);
      const email = mailboxOf(entry.record.email);
      if (entry.record.plan === 'trial' && !this.trials.has(email)) this.trials.set(email, entry.record.prefix);
    } else if (entry.op === 'put') {
      this.putRecord(entry.record);
      if (entry.payment_id !== undefined) {
        const ids = this.paid.get(entry.record.prefix) ?? new Set<string>();
        ids.add(entry.payment_id);
        this.paid.set(entry.record.prefix, ids);
      }
    } else {
      this.count(entry.prefix, entry.period_start, entry.day, entry.delta);
    }
  }

  /** Every key with its counters, payments and trial e-mail (`store move`), oldest first. */
  transfers(): KeyTransfer[] {
    const trialOf = new Map([...this.trials].map(([email, prefix]) => [prefix, email]));
    return [...this.byHash.values()]
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.prefix.localeCompare(b.prefix))
      .map((record) => {
        const c = this.counters.get(record.prefix);
        return {
          record,
          counter: c && c.period_start === record.period_start
            ? { period_start: c.period_start, period_used: c.period_used, day: c.day, day_used: c.day_used }
            : null,
          payment_ids: [...(this.paid.get(record.prefix) ?? [])],
          trial_of: trialOf.get(record.prefix) ?? null,
        };
      });
  }

  byPrefix(prefix: string): KeyRecord | undefined {
    const hash = this.hashByPrefix.get(prefix);
    return hash === undefined ? undefined : this.byHash.get(hash);
  }

  paymentApplied(prefix: string, paymentId: string): boolean {
    return this.paid.get(prefix)?.has(paymentId) ?? false;
  }

  trialPrefix(email: string): string | undefined {
    return this.trials.get(mailboxOf(email));
  }

  /** Lookups counted in that period, and in that day of that period. */
  counts(prefix: string, periodStart: string, day: string): { period: number; daily: number } {
    const c = this.counters.get(prefix);
    if (!c || c.period_start !== periodStart) return { period: 0, daily: 0 };
    return { period: c.period_used, daily: c.day === day ? c.day_used : 0 };
  }

  private putRecord(record: KeyRecord): void {
    const previous = this.byHash.get(record.hash);
    // A renewal starts the counters over; the old period's count is of no further use.
    if (previous && previous.period_start !== record.period_start) this.counters.delete(record.prefix);
    this.byHash.set(record.hash, record);
    this.hashByPrefix.set(record.prefix, record.hash);
  }

  private count(prefix: string, periodStart: string, day: string, delta: number): void {
    const c = this.counters.get(prefix);
    if (delta === -1) {
      // A refund only ever touches the windows it was counted in; later windows keep their counts.
      if (!c || c.period_start !== periodStart) return;
      c.period_used = Math.max(0, c.period_used - 1);
      if (c.day === day) c.day_used = Math.max(0, c.day_used - 1);
      return;
    }
    if (!c || c.period_start !== periodStart) {
      this.counters.set(prefix, { prefix, period_start: periodStart, period_used: delta, day, day_used: delta });
      return;
    }
    c.period_used += delta;
    c.day_used = c.day === day ? c.day_used + delta : delta;
    c.day = day;
  }
}
