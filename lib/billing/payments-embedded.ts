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
 * with a synchronous write before the caller goes on (a crash of the process loses none; not
 * fsynced, so a power cut may lose the last moments), compacted at start. One process per DATA_DIR,
 * as for the access store: a claim reads and writes in one synchronous step of that process, so no
 * two deliveries interleave inside it.
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

  private write(line: Line): void {
    this.journal.append([line], false);
    this.apply(line);
  }

  async claim(pending: PaymentRecord, nowMs: number): Promise<PaymentClaim> {
    const claim = claimOf(this.payments.get(pending.id) ?? null, nowMs);
    if (claim.kind === 'claimed') this.write({ p: pending });
    return claim;
  }

  async settle(record: PaymentRecord): Promise<void> {
    this.write({ p: record });
  }

  async listByKey(prefix: string): Promise<PaymentRecord[]> {
    return newestFirst([...this.payments.values()].filter((p) => p.key_prefix === prefix));
  }

  async saveAttempt(attempt: LinkAttempt): Promise<LinkAttempt> {
    const kept = this.attempts.get(attempt.reference_id);
    if (kept) return kept;
    this.write({ a: attempt });
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
