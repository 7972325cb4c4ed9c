import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { claimOf, CLAIM_LEASE_MS, IDEMPOTENCY_TTL_MS, liveRecord, type Claim, type IdempotencyRecord, type IdempotencyStore, type StoredAnswer } from './store.ts';

/** One journal line: an answered key (pending claims are memory only: they die with the process). */
interface Line {
  k: string;
  r: IdempotencyRecord | null;
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
 * The embedded twin, as the access store keeps its files: answers in memory, each appended to
 * `journal.ndjson` with a synchronous write before the request is answered (so a crash of the
 * process loses none), the live ones rewritten at start and every COMPACT_AFTER_BYTES (temp file,
 * fsync, rename). Claims are not journaled: after a restart the request that held one is gone and a
 * retry should run. One process per directory.
 */
export class EmbeddedIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();
  private readonly journalPath: string;
  private fd: number;
  private appendedBytes = 0;

  private readonly dir: string;
  private readonly clock: () => number;
  constructor(dir: string, clock: () => number = Date.now) {
    this.dir = dir;
    this.clock = clock;
    mkdirSync(dir, { recursive: true });
    this.journalPath = join(dir, 'journal.ndjson');
    if (existsSync(this.journalPath)) {
      const lines = readFileSync(this.journalPath, 'utf8').split('\n');
      lines.pop(); // empty, or a line torn by a crash
      for (const line of lines) {
        const { k, r } = JSON.parse(line) as Line;
        if (r) this.records.set(k, r);
        else this.records.delete(k);
      }
    }
    this.fd = -1;
    this.compact();
  }

  private k(scope: string, key: string): string {
    return `${scope}:${key}`;
  }

  private write(line: Line): void {
    const text = `${JSON.stringify(line)}\n`;
    writeSync(this.fd, text);
    this.appendedBytes += Buffer.byteLength(text);
    if (this.appendedBytes >= COMPACT_AFTER_BYTES) this.compact();
  }

  /** Rewrites the journal with the live answers only. */
  private compact(): void {
    const now = this.clock();
    for (const [k, r] of this.records) if (r.state !== 'done' || r.expires_at <= now) this.records.delete(k);
    const temp = `${this.journalPath}.tmp`;
    const tempFd = openSync(temp, 'w');
    try {
      writeFileSync(tempFd, [...this.records].map(([k, r]) => `${JSON.stringify({ k, r })}\n`).join(''));
      fsyncSync(tempFd);
    } finally {
      closeSync(tempFd);
    }
    if (this.fd >= 0) closeSync(this.fd);
    renameSync(temp, this.journalPath);
    this.fd = openSync(this.journalPath, 'a');
    this.appendedBytes = 0;
  }

  async claim(scope: string, key: string, fingerprint: string, nowMs: number): Promise<Claim> {
    const k = this.k(scope, key);
    const current = liveRecord(this.records.get(k) ?? null, nowMs);
    if (current) return claimOf(current);
    const token = randomUUID();
    this.records.set(k, { state: 'pending', fingerprint, token, expires_at: nowMs + CLAIM_LEASE_MS });
    return { kind: 'claimed', token };
  }

  async complete(scope: string, key: string, fingerprint: string, answer: StoredAnswer, nowMs: number): Promise<void> {
    const k = this.k(scope, key);
    const record: IdempotencyRecord = { state: 'done', fingerprint, answer, expires_at: nowMs + IDEMPOTENCY_TTL_MS };
    this.write({ k, r: record });
    this.records.set(k, record);
  }

  async release(scope: string, key: string, token: string): Promise<void> {
    const k = this.k(scope, key);
    const current = this.records.get(k);
    if (current?.state === 'pending' && current.token === token) this.records.delete(k);
  }

  async close(): Promise<void> {
    if (this.fd < 0) return;
    this.compact();
    closeSync(this.fd);
    this.fd = -1;
  }
}
