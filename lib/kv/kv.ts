/**
 * The key-value store, as a few primitive operations with two backends: Redis (shared by every API,
 * normalizer and dispatcher process; redis.ts) and embedded (one process, the state in memory and a
 * journal in a directory under DATA_DIR; embedded.ts over journal.ts). Push's state and the shipment
 * analyzer's live in it; their rules are written once on top of this interface.
 *
 * Values are JSON documents. `update` is the one atomic step: read, compute in JS, write only if
 * nothing changed meanwhile (else compute again), so concurrent processes never lose an update.
 * Keys name their owner in braces (`{trk_test_Ab3dE9x}`): with Redis every key of one API key
 * shares a hash slot, and each atomic step touches one key.
 */
export interface Kv {
  get<T>(key: string): Promise<T | null>;
  /** Many documents at once, in the order asked (null where absent). */
  getMany<T>(keys: readonly string[]): Promise<(T | null)[]>;
  /**
   * Atomic read-modify-write of one document. `change` may run more than once (on a conflicting
   * write) and must be pure. `next: undefined` leaves the document as it is; `null` deletes it.
   * `ttlMs` (with a `next`) makes it expire.
   */
  update<T, R>(key: string, change: (current: T | null) => { next?: T | null; result: R; ttlMs?: number }): Promise<R>;
  /**
   * Atomic read-modify-write of several documents of one owner (keys sharing a hash tag), writing
   * any documents of that owner and adding set members and capped-list items in the same step:
   * all of it happens, against the documents as `change` saw them, or none (then `change` runs
   * again on what is there now). One round trip with Redis when the documents are as this process
   * last read or wrote them.
   */
  transact<R>(keys: readonly string[], change: (current: unknown[]) => Transaction<R>): Promise<R>;
  /**
   * Adds 1 to a counter document (absent: 0) and answers the new count; `ttlMs` is set when the
   * counter is created. One atomic command, so any number of concurrent callers never conflict
   * (request counters: `update` retries under heavy contention on one document).
   */
  increment(key: string, ttlMs: number): Promise<number>;
  set<T>(key: string, value: T, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<void>;

  /** Sets of strings. `add` answers whether the member was new. */
  setAdd(key: string, member: string): Promise<boolean>;
  setRemove(key: string, member: string): Promise<void>;
  setMembers(key: string): Promise<string[]>;

  /** A schedule: members with a due time (epoch ms). `schedule` sets or moves one. */
  schedule(key: string, member: string, atMs: number): Promise<void>;
  unschedule(key: string, member: string): Promise<void>;
  /**
   * Takes a member off the schedule only if its due time is still `atMs` (a claim's lease end):
   * anyone who scheduled it again since (an enqueue, an enable) keeps it. Answers whether it did.
   */
  unscheduleIf(key: string, member: string, atMs: number): Promise<boolean>;
  /**
   * Members due by `nowMs` (earliest first, at most `limit`), each pushed to `nowMs + leaseMs` in
   * the same atomic step: a process that dies holding one lets another take it after the lease.
   */
  claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]>;
  /** The earliest due time, or null when nothing is scheduled. */
  nextDue(key: string): Promise<number | null>;

  /** A capped list, newest first. */
  listPush(key: string, value: unknown, keep: number): Promise<void>;
  listRange<T>(key: string, count: number): Promise<T[]>;

  /**
   * False while the store is known to be unreachable (Redis reconnecting): background loops wait
   * instead of queueing commands behind the connection, which would hold up requests' commands too.
   */
  available(): boolean;

  close(): Promise<void>;
}

/** What a `transact` step does: every part applies together. */
export interface Transaction<R> {
  /** Documents to write (`value: null` deletes), any keys of the same owner, read or not. */
  writes?: { key: string; value: unknown; ttlMs?: number }[];
  setAdds?: { key: string; member: string }[];
  listPushes?: { key: string; value: unknown; keep: number }[];
  result: R;
}

/** How often `update` tries before giving up on a document several writers fight over. */
export const MAX_UPDATE_ATTEMPTS = 100;
