import { join } from 'node:path';
import { Journal } from '../kv/index.ts';
import { claimOf, newestFirst, type LinkAttempt, type PaymentClaim, type PaymentRecord, type PaymentStore } from './payments.ts';

/** One journal line: a payment record's newest state, or an attempt's link. */
type Line = { p: PaymentRecord } | { a: LinkAttempt };

/** The whole state, as a compaction writes it. */
interface Snapshot {
  payments: PaymentRecord[];
  attempts: LinkAttempt[];
}

export function embeddedPaymentsDir(dataDir: string): string {
  return join(dataDir, 'payments');
}

/**
 * The embedded twin: records in memory, every change appended to the journal (lib/kv/journal.ts)
 * with a synchronous write and applied at once, and the call resolves only once the change is
 * fsynced (the journal's group commit: one fsync for every change of the moment). The gateway's
 * webhook is answered 200 after `settle` resolves and then never sent again, so a payment it was
 * told we have must survive a power cut, not only a crash of the process. Compacted at start. One
 * process per DATA_DIR, as for the access store: a claim reads and writes in one synchronous step
 * of that process, so no two deliveries interleave inside it.
 */
export class EmbeddedPaymentStore implements PaymentStore {
  private readonly payments = new Map<string, PaymentRecord>();
  private readonly attempts = new Map<string, LinkAttempt>();
  private readonly journal: Journal<Line>;

  constructor(dir: string) {
    // The previous version's file (journal.ndjson, these same lines, no snapshot) is read as the journal.
    const { journal, snapshot, entries } = Journal.open<Line>(dir);
    const saved = snapshot as Snapshot | null;
    for (const p of saved?.payments ?? []) this.payments.set(p.id, p);
    for (const a of saved?.attempts ?? []) this.attempts.set(a.reference_id, a);
    for (const line of entries) this.apply(line);
    this.journal = journal;
    this.journal.compact((): Snapshot => ({ payments: [...this.payments.values()], attempts: [...this.attempts.values()] }));
  }

  private apply(line: Line): void {
    if ('p' in line) this.payments.set(line.p.id, line.p);
    else this.attempts.set(line.a.reference_id, line.a);
  }

  /** Journal first, then memory (synchronously); resolves once the line is fsynced. */
  private write(line: Line): Promise<void> {
    const synced = this.journal.commit([line]);
    this.apply(line);
    return synced;
  }

  /** Group fsyncs done (lib/kv/journal.ts): tests check that payments take the durable path. */
  get syncs(): number {
    return this.journal.syncs;
  }

  async claim(pending: PaymentRecord, nowMs: number): Promise<PaymentClaim> {
    const claim = claimOf(this.payments.get(pending.id) ?? null, nowMs);
    if (claim.kind === 'claimed') await this.write({ p: pending });
    // A redelivery answered "already settled" acknowledges that record too: not before it is on disk.
    else await this.journal.flushed();
    return claim;
  }

  async settle(record: PaymentRecord): Promise<void> {
    await this.write({ p: record });
  }

  async listByKey(prefix: string): Promise<PaymentRecord[]> {
    return newestFirst([...this.payments.values()].filter((p) => p.key_prefix === prefix));
  }

  async saveAttempt(attempt: LinkAttempt): Promise<LinkAttempt> {
    const kept = this.attempts.get(attempt.reference_id);
    if (kept) {
      await this.journal.flushed();
      return kept;
    }
    await this.write({ a: attempt });
    return attempt;
  }

  async getAttempt(referenceId: string): Promise<LinkAttempt | null> {
    return this.attempts.get(referenceId) ?? null;
  }

  /** Every payment and link attempt held (`store move`). */
  dump(): { payments: PaymentRecord[]; attempts: LinkAttempt[] } {
    return { payments: [...this.payments.values()], attempts: [...this.attempts.values()] };
  }

  async close(): Promise<void> {
    this.journal.close();
  }
}
