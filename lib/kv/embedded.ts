import { Journal } from './journal.ts';
import type { Kv, Transaction } from './kv.ts';
import { ScoredSet } from './scored-set.ts';

/** One change, as a journal line. */
type Entry =
  | { o: 'set'; k: string; v: unknown; x?: number }
  | { o: 'del'; k: string }
  | { o: 'sadd' | 'srem'; k: string; m: string }
  | { o: 'zadd'; k: string; m: string; s: number }
  | { o: 'zrem'; k: string; m: string }
  | { o: 'lpush'; k: string; v: unknown; n: number }
  /** Several changes that apply together (one line: a line torn by a crash drops all of them). */
  | { o: 'step'; e: Entry[] };

interface Snapshot {
  docs: [string, unknown, number | null][];
  sets: [string, string[]][];
  zsets: [string, [string, number][]][];
  lists: [string, unknown[]][];
}

/** An embedded Kv's whole state (`dump()`): the snapshot's shape. */
export type KvDump = Snapshot;

/** Journal lines past which the state is rewritten as a snapshot (bounds start-up time and disk). */
const COMPACT_AFTER = 200_000;

/**
 * The key-value store of the embedded default, in its own directory (push's: `DATA_DIR/push/`):
 * the state in memory, every change appended to the journal (journal.ts) with a synchronous write
 * and applied at once (so each check-and-write stays one synchronous step), and the call resolves
 * only once the change is fsynced (group commit: one fsync for every change of the moment). Push's
 * endpoints, queue and attempt rows are acknowledged to customers and drive deliveries, so they
 * must survive a power cut, not only a crash of the process. A read may see a change whose fsync
 * is still running; its writer has not been answered yet. The state is compacted into the snapshot
 * at open and every COMPACT_AFTER changes. Schedule leases are not journaled: after a restart
 * everything leased is due at once, which is what a restart should do.
 */
export class EmbeddedKv implements Kv {
  private readonly docs = new Map<string, { v: unknown; x: number | null }>();
  private readonly sets = new Map<string, Set<string>>();
  private readonly zsets = new Map<string, ScoredSet>();
  private readonly lists = new Map<string, unknown[]>();
  private readonly journal: Journal<Entry>;

  private readonly clock: () => number;
  constructor(dir: string, clock: () => number = Date.now) {
    this.clock = clock;
    // Snapshots written before the shared journal have the same shape, without a generation.
    const { journal, snapshot, entries } = Journal.open<Entry>(dir);
    if (snapshot) this.load(snapshot as unknown as Snapshot);
    for (const entry of entries) this.apply(entry);
    this.journal = journal;
    this.compact();
  }

  private load(snapshot: Snapshot): void {
    for (const [k, v, x] of snapshot.docs) this.docs.set(k, { v, x });
    for (const [k, members] of snapshot.sets) this.sets.set(k, new Set(members));
    for (const [k, entries] of snapshot.zsets) this.zsets.set(k, new ScoredSet(entries));
    for (const [k, items] of snapshot.lists) this.lists.set(k, items);
  }

  private apply(entry: Entry): void {
    switch (entry.o) {
      case 'set': this.docs.set(entry.k, { v: entry.v, x: entry.x ?? null }); break;
      case 'del': this.docs.delete(entry.k); break;
      case 'sadd': this.setOf(entry.k).add(entry.m); break;
      case 'srem': this.sets.get(entry.k)?.delete(entry.m); break;
      case 'zadd': this.zsetOf(entry.k).set(entry.m, entry.s); break;
      case 'zrem': this.zsets.get(entry.k)?.delete(entry.m); break;
      case 'step': for (const e of entry.e) this.apply(e); break;
      case 'lpush': {
        const list = this.lists.get(entry.k) ?? [];
        list.unshift(entry.v);
        if (list.length > entry.n) list.length = entry.n;
        this.lists.set(entry.k, list);
        break;
      }
    }
  }

  /**
   * Journal first, then memory: what a caller is told happened is written. Resolves once fsynced;
   * every write method awaits it before it resolves, so nothing is acknowledged before then.
   */
  private record(entry: Entry): Promise<void> {
    const synced = this.journal.commit([entry]);
    this.apply(entry);
    // A compaction's snapshot is fsynced: it answers the waiting commits itself.
    if (this.journal.appended >= COMPACT_AFTER) this.compact();
    return synced;
  }

  /** Group fsyncs done (journal.ts): tests check that writes take the durable path. */
  get syncs(): number {
    return this.journal.syncs;
  }

  private setOf(key: string): Set<string> {
    let set = this.sets.get(key);
    if (!set) this.sets.set(key, (set = new Set()));
    return set;
  }

  private zsetOf(key: string): ScoredSet {
    let zset = this.zsets.get(key);
    if (!zset) this.zsets.set(key, (zset = new ScoredSet()));
    return zset;
  }

  private read<T>(key: string): T | null {
    const doc = this.docs.get(key);
    if (!doc) return null;
    if (doc.x !== null && doc.x <= this.clock()) {
      this.docs.delete(key);
      return null;
    }
    // A copy: callers may change what they read without changing the store.
    return structuredClone(doc.v) as T;
  }

  async get<T>(key: string): Promise<T | null> {
    return this.read<T>(key);
  }

  async getMany<T>(keys: readonly string[]): Promise<(T | null)[]> {
    return keys.map((key) => this.read<T>(key));
  }

  async update<T, R>(key: string, change: (current: T | null) => { next?: T | null; result: R; ttlMs?: number }): Promise<R> {
    // One process, and nothing awaited between the read and the write: atomic as it stands.
    const outcome = change(this.read<T>(key));
    if (outcome.next === null) await this.record({ o: 'del', k: key });
    else if (outcome.next !== undefined) {
      await this.record({ o: 'set', k: key, v: outcome.next, ...(outcome.ttlMs ? { x: this.clock() + outcome.ttlMs } : {}) });
    }
    return outcome.result;
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    const current = this.read<number>(key);
    const next = (current ?? 0) + 1;
    // The expiry is the counter's creation's, as with Redis.
    const expires = current === null ? this.clock() + ttlMs : this.docs.get(key)?.x ?? this.clock() + ttlMs;
    await this.record({ o: 'set', k: key, v: next, x: expires });
    return next;
  }

  async transact<R>(keys: readonly string[], change: (current: unknown[]) => Transaction<R>): Promise<R> {
    // As update: nothing awaited between the reads and the write.
    const step = change(keys.map((key) => this.read(key)));
    const now = this.clock();
    const entries: Entry[] = [
      ...(step.writes ?? []).map((w): Entry => (w.value === null
        ? { o: 'del', k: w.key }
        : { o: 'set', k: w.key, v: w.value, ...(w.ttlMs ? { x: now + w.ttlMs } : {}) })),
      ...(step.setAdds ?? []).filter((a) => !this.sets.get(a.key)?.has(a.member)).map((a): Entry => ({ o: 'sadd', k: a.key, m: a.member })),
      ...(step.listPushes ?? []).map((p): Entry => ({ o: 'lpush', k: p.key, v: p.value, n: p.keep })),
    ];
    // One journal line (one write) for the whole step, so it is kept whole or not at all.
    if (entries.length === 1) await this.record(entries[0]!);
    else if (entries.length > 1) await this.record({ o: 'step', e: entries });
    return step.result;
  }

  async set<T>(key: string, value: T, ttlMs?: number): Promise<void> {
    await this.record({ o: 'set', k: key, v: value, ...(ttlMs ? { x: this.clock() + ttlMs } : {}) });
  }

  async delete(key: string): Promise<void> {
    if (this.docs.has(key)) await this.record({ o: 'del', k: key });
  }

  async setAdd(key: string, member: string): Promise<boolean> {
    if (this.sets.get(key)?.has(member)) return false;
    await this.record({ o: 'sadd', k: key, m: member });
    return true;
  }

  async setRemove(key: string, member: string): Promise<void> {
    if (this.sets.get(key)?.has(member)) await this.record({ o: 'srem', k: key, m: member });
  }

  async setMembers(key: string): Promise<string[]> {
    return [...(this.sets.get(key) ?? [])];
  }

  async schedule(key: string, member: string, atMs: number): Promise<void> {
    if (this.zsets.get(key)?.get(member) !== atMs) await this.record({ o: 'zadd', k: key, m: member, s: atMs });
  }

  async unschedule(key: string, member: string): Promise<void> {
    if (this.zsets.get(key)?.has(member)) await this.record({ o: 'zrem', k: key, m: member });
  }

  async unscheduleIf(key: string, member: string, atMs: number): Promise<boolean> {
    if (this.zsets.get(key)?.get(member) !== atMs) return false;
    await this.record({ o: 'zrem', k: key, m: member });
    return true;
  }

  async claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    const zset = this.zsets.get(key);
    if (!zset) return [];
    const due = zset.due(nowMs, limit);
    for (const member of due) zset.set(member, nowMs + leaseMs); // not journaled: see the class comment
    return due;
  }

  async nextDue(key: string): Promise<number | null> {
    const zset = this.zsets.get(key);
    return zset ? zset.min() : null;
  }

  async listPush(key: string, value: unknown, keep: number): Promise<void> {
    await this.record({ o: 'lpush', k: key, v: value, n: keep });
  }

  async listRange<T>(key: string, count: number): Promise<T[]> {
    return structuredClone((this.lists.get(key) ?? []).slice(0, count)) as T[];
  }

  /**
   * Everything held, as `store move` copies it into another Kv: documents with their expiry (epoch
   * ms, null: none; expired ones left out), sets, schedules (member, due time) and lists (newest first).
   */
  dump(): KvDump {
    const now = this.clock();
    return {
      docs: [...this.docs].filter(([, d]) => d.x === null || d.x > now).map(([k, d]) => [k, structuredClone(d.v), d.x]),
      sets: [...this.sets].filter(([, s]) => s.size > 0).map(([k, s]) => [k, [...s]]),
      zsets: [...this.zsets].filter(([, z]) => z.size > 0).map(([k, z]) => [k, [...z]]),
      lists: [...this.lists].map(([k, items]) => [k, structuredClone(items)]),
    };
  }

  /** Rewrites the state as a snapshot and starts an empty journal (expired documents dropped). */
  compact(): void {
    const now = this.clock();
    this.journal.compact((): Snapshot => ({
      docs: [...this.docs].filter(([, d]) => d.x === null || d.x > now).map(([k, d]) => [k, d.v, d.x]),
      sets: [...this.sets].filter(([, s]) => s.size > 0).map(([k, s]) => [k, [...s]]),
      zsets: [...this.zsets].filter(([, z]) => z.size > 0).map(([k, z]) => [k, [...z]]),
      lists: [...this.lists],
    }));
  }

  available(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.journal.close();
  }
}
