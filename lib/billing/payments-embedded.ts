import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { claimOf, newestFirst, type LinkAttempt, type PaymentClaim, type PaymentRecord, type PaymentStore } from './payments.ts';

/** One journal line: a payment record's newest state, or an attempt's link. */
type Line = { p: PaymentRecord } | { a: LinkAttempt };

export function embeddedPaymentsDir(dataDir: string): string {
  return join(dataDir, 'payments');
}

/**
 * The embedded twin: records in memory, every change appended to `journal.ndjson` with a
 * synchronous write before the caller goes on (a crash loses none), rewritten at start. One process
 * per DATA_DIR, as for the access store: a claim reads and writes in one synchronous step of that
 * process, so no two deliveries interleave inside it.
 */
export class EmbeddedPaymentStore implements PaymentStore {
  private readonly payments = new Map<string, PaymentRecord>();
  private readonly attempts = new Map<string, LinkAttempt>();
  private readonly path: string;
  private fd = -1;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, 'journal.ndjson');
    if (existsSync(this.path)) {
      const lines = readFileSync(this.path, 'utf8').split('\n');
      lines.pop(); // empty, or a line torn by a crash
      for (const text of lines) this.apply(JSON.parse(text) as Line);
    }
    this.rewrite();
  }

  private apply(line: Line): void {
    if ('p' in line) this.payments.set(line.p.id, line.p);
    else this.attempts.set(line.a.reference_id, line.a);
  }

  private write(line: Line): void {
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    this.apply(line);
  }

  private rewrite(): void {
    const temp = `${this.path}.tmp`;
    const fd = openSync(temp, 'w');
    try {
      const lines: Line[] = [...[...this.payments.values()].map((p) => ({ p })), ...[...this.attempts.values()].map((a) => ({ a }))];
      writeFileSync(fd, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (this.fd >= 0) closeSync(this.fd);
    renameSync(temp, this.path);
    this.fd = openSync(this.path, 'a');
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

  async close(): Promise<void> {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
  }
}
