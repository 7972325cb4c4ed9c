import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Journal } from '../kv/index.ts';
import {
  claimOf, CLAIM_LEASE_MS, IDEMPOTENCY_TTL_MS, liveRecord, type Claim, type IdempotencyRecord, type IdempotencyStore, type StoredAnswer,
} from './store.ts';

/** One journal line: an answered key (pending claims are memory only: they die with the process). */
interface Line {
  k: string;
  r: IdempotencyRecord | null;
}

/** The live answers, as a compaction writes them. */
interface Snapshot {
  answers: [string, IdempotencyRecord][];
}

/**
 * Journal bytes after which the live records are rewritten (bounds start-up time and disk): a
 * batch's answer can be 300 KB, so lines alone would say little.
 */
const COMPACT_AFTER_BYTES = 64 * 2 ** 20;

/** Conventional directory under DATA_DIR. */
export function embeddedIdempotencyDir(dataDir: string): string {
  return join(dataDir, 'idempotency');
}

/**
 * The embedded twin, kept like the access store's files (lib/kv/journal.ts): answers in memory,
 * each appended to the journal with a synchronous write and `complete` resolving once it is fsynced
 * (the journal's group commit), so an answer the client was sent survives a power cut: a retry with
 * the key after one must be replayed, not run again (it would count its lookups twice). The live
 * answers are compacted into the snapshot at start, every COMPACT_AFTER_BYTES and at close. Claims
 * are not journaled: after a restart the request that held one is gone and a retry should run. One
 * process per directory.
 */
export class EmbeddedIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();
  private readonly journal: Journal<Line>;
  private closed = false;

  private readonly clock: () => number;
  constructor(dir: string, clock: () => number = Date.now) {
    this.clock = clock;
    // The previous version's file (journal.ndjson, these same lines, no snapshot) is read as the journal.
    const { journal, snapshot, entries } = Journal.open<Line>(dir);
    for (const [k, r] of (snapshot as Snapshot | null)?.answers ?? []) this.records.set(k, r);
    for (const { k, r } of entries) {
      if (r) this.records.set(k, r);
      else this.records.delete(k);
    }
    this.journal = journal;
    this.compact();
  }

  private k(scope: string, key: string): string {
    return `${scope}:${key}`;
  }

  /** Rewrites the journal as the live answers only. Claims in flight stay in memory. */
  private compact(): void {
    const now = this.clock();
    for (const [k, r] of this.records) if (r.expires_at <= now) this.records.delete(k);
    this.journal.compact((): Snapshot => ({ answers: [...this.records].filter(([, r]) => r.state === 'done') }));
  }

  async claim(scope: string, key: string, fingerprint: string, nowMs: number): Promise<Claim> {
    const k = this.k(scope, key);
    const current = liveRecord(this.records.get(k) ?? null, nowMs);
    if (current) {
      // A replay sends an answer whose fsync may still run (its own request waits for it): wait too.
      if (current.state === 'done') await this.journal.flushed();
      return claimOf(current);
    }
    const token = randomUUID();
    this.records.set(k, { state: 'pending', fingerprint, token, expires_at: nowMs + CLAIM_LEASE_MS });
    return { kind: 'claimed', token };
  }

  async complete(scope: string, key: string, fingerprint: string, answer: StoredAnswer, nowMs: number): Promise<void> {
    const k = this.k(scope, key);
    const record: IdempotencyRecord = { state: 'done', fingerprint, answer, expires_at: nowMs + IDEMPOTENCY_TTL_MS };
    const synced = this.journal.commit([{ k, r: record }]);
    // In memory before a compaction, which writes what memory holds (and answers the commit).
    this.records.set(k, record);
    if (this.journal.appendedBytes >= COMPACT_AFTER_BYTES) this.compact();
    // The batch route sends the answer only after this: nothing is acknowledged before the fsync.
    await synced;
  }

  /** Group fsyncs done (lib/kv/journal.ts): tests check that answers take the durable path. */
  get syncs(): number {
    return this.journal.syncs;
  }

  async release(scope: string, key: string, token: string): Promise<void> {
    const k = this.k(scope, key);
    const current = this.records.get(k);
    if (current?.state === 'pending' && current.token === token) this.records.delete(k);
  }

  /** The live answers (`store move`): each with the scope and key it was claimed under. */
  dump(): { scope: string; key: string; record: Extract<IdempotencyRecord, { state: 'done' }> }[] {
    const now = this.clock();
    return [...this.records].flatMap(([k, record]) => {
      if (record.state !== 'done' || record.expires_at <= now) return [];
      // k is `<scope>:<key>`; the scope (the API key's hash) holds no ':'.
      const at = k.indexOf(':');
      return [{ scope: k.slice(0, at), key: k.slice(at + 1), record }];
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.compact();
    this.journal.close();
  }
}
