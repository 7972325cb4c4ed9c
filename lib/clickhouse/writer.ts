/**
 * Batched, idempotent ClickHouse writer for the normalizer (Langfuse-style): rows are queued per
 * write and inserted with JSONEachRow when a table reaches `maxBatchRows`, `flushIntervalMs` after
 * the first queued row, or when someone calls flush(). Tiny inserts make too many parts.
 *
 * Flushes run one at a time and back to back: each takes whole writes from the front of the queue
 * up to `maxBatchRows` rows per table (write-queue.ts), and rows queued meanwhile go into the next
 * one, so the caller prepares the next batch while ClickHouse inserts this one.
 *
 * Durability contract: `flush()` resolves once every row queued before the call is inserted (the
 * normalizer commits Kafka offsets only then); it rejects if any of them could not be, and those
 * rows stay queued for the next flush. `close()` flushes.
 *
 * Idempotence. Every poll of a shipment lists all its scans, so most events of a re-poll are already
 * stored; Kafka may also re-deliver a batch (a crash between insert and offset commit) and a
 * retried insert may have landed the first time. So the writer drops rows queued twice and rows
 * ClickHouse already holds — identity poll_id (carrier_polls, shipments) or event_id (events), with
 * its mapping_version. Asking every table about every row cost ~0.9 s per table per 20,000 polls,
 * so each flush asks as little as is still exact (stored-plan.ts decides, stored.ts holds the queries):
 *
 * 1. carrier_polls, once per flush before anything is inserted: which of the flush's shipments have
 *    any stored poll, and which of its polls are stored (by polled_at span). Stored polls are dropped.
 * 2. events: asked only for shipments with a stored poll. A flush inserts carrier_polls, then
 *    events, then shipments, stopping at the first table that fails, and a poll's rows are never
 *    split across flushes; so an event row is never stored before a poll of its shipment is. A
 *    shipment without a stored poll has no stored event: nothing to ask (every new shipment).
 * 3. shipments: asked only for rows whose own poll is stored, by the same argument.
 * 4. A retried attempt (attempt > 0) asks the full question for its table: the failed attempt may
 *    have landed. A flush after a failed one starts again at 1, so requeued rows are asked about.
 *
 * This relies on these three tables being written by this writer only (bench/clickhouse-measure.ts's generated data
 * lives in throw-away databases). One writer owns an AWB at a time (same-key Kafka messages share
 * a partition) and its flushes run one at a time, so no other insert races the check. A row whose
 * key is stored under another mapping_version (a replay with new rules) is inserted;
 * ReplacingMergeTree keeps the newest on merge, and readers that must be exact before the merge use
 * argMax by ingest_version (events.ts) or FINAL.
 */
import { finished } from 'node:stream/promises';
import { ExponentialBackoff, handleWhen, retry, type RetryPolicy } from 'cockatiel';
import type { ClickHouseClient } from './client.ts';
import { clickHouseErrorInfo, isRetryableClickHouseError, pingClickHouse } from './client.ts';
import { toClickHouseDateTime } from './datetime.ts';
import { jsonEachRowStream } from './json-each-row.ts';
import type { PollRows } from './rows.ts';
import { StoredPlan } from './stored-plan.ts';
import { identity, keyOf, type AnyRow } from './stored.ts';
import { WRITER_TABLES, WriteQueue, zero, type Batch, type TableCounts, type WriterTable } from './write-queue.ts';

export { WRITER_TABLES, type WriterTable } from './write-queue.ts';
export type FlushReason = 'size' | 'timer' | 'manual' | 'close';

export interface FlushReport {
  reason: FlushReason;
  /** Rows taken from the queues by this flush. */
  rows: TableCounts;
  /** Rows inserted (rows minus duplicates). */
  inserted: TableCounts;
  /** Rows dropped because the same key and mapping_version was already stored or queued twice. */
  duplicates: TableCounts;
  /** Retries after transient failures, summed over tables. */
  retries: number;
  durationMs: number;
  /** Of it, time spent asking ClickHouse which rows are already stored. */
  checkMs: number;
  /** Rows asked about per table (stored-plan.ts: most new rows need no question). */
  checkedRows: TableCounts;
  /** Set when the flush failed; its rows (from the failed table on) are queued again. */
  error?: Error;
}

export interface WriterLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ClickHouseWriterOptions {
  /** Flush when any table has this many queued rows; also the most rows per table one flush takes (whole writes, at least one). Default 5,000. */
  maxBatchRows?: number;
  /** Flush this long after a row is queued into empty queues. Default 1,000 ms. */
  flushIntervalMs?: number;
  /** Largest single INSERT; bigger batches are split. Default 100,000 rows. */
  maxInsertRows?: number;
  /** Retries of a transient failure (network, timeout, too many parts...). Default 5. */
  maxRetries?: number;
  /** First backoff delay, doubled each retry with jitter. Default 100 ms. */
  initialRetryDelayMs?: number;
  /** Longest backoff delay. Default 5,000 ms. */
  maxRetryDelayMs?: number;
  /** Skip rows already stored (the idempotence check). Default true. */
  dedupe?: boolean;
  logger?: WriterLogger;
  /** Called after every flush that had rows, failed or not (metrics, tests). */
  onFlush?: (report: FlushReport) => void;
}

export interface WriterStats {
  queued: TableCounts;
  inserted: TableCounts;
  duplicates: TableCounts;
  retries: number;
  failedFlushes: number;
}

export class WriterClosedError extends Error {
  constructor() {
    super('the ClickHouse writer is closed');
    this.name = 'WriterClosedError';
  }
}

/** Priority of flush reasons when several ask at once: a waiting caller names the flush. */
const REASON_RANK: Record<FlushReason, number> = { timer: 0, size: 1, manual: 2, close: 3 };

export class ClickHouseWriter {
  private readonly queue = new WriteQueue();
  private readonly maxBatchRows: number;
  private readonly flushIntervalMs: number;
  private readonly maxInsertRows: number;
  private readonly dedupe: boolean;
  private readonly policy: RetryPolicy;
  private timer: NodeJS.Timeout | null = null;
  /** The flush loop while it runs (flushes run one at a time). */
  private loop: Promise<void> | null = null;
  /** A size/timer flush asked for and not run yet. */
  private backgroundReason: FlushReason | null = null;
  /** flush()/close() callers: each waits until every write up to its `seq` is stored. */
  private waiters: { seq: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  /** Sequence number of the last write(); every write up to `storedSeq` is stored. */
  private writeSeq = 0;
  private storedSeq = 0;
  /** The newest write in the insert under way (null between inserts): abandon() keeps the waiters up to it. */
  private flushingSeq: number | null = null;
  private closed = false;
  private lastIngestVersion = 0;
  private readonly totals = { inserted: zero(), duplicates: zero(), retries: 0, failedFlushes: 0 };

  private readonly client: ClickHouseClient;
  private readonly options: ClickHouseWriterOptions;
  constructor(
    client: ClickHouseClient,
    options: ClickHouseWriterOptions = {},
  ) {
    this.client = client;
    this.options = options;
    this.maxBatchRows = Math.max(options.maxBatchRows ?? 5_000, 1);
    this.flushIntervalMs = options.flushIntervalMs ?? 1_000;
    this.maxInsertRows = Math.max(options.maxInsertRows ?? 100_000, 1);
    this.dedupe = options.dedupe ?? true;
    this.policy = retry(handleWhen(isRetryableClickHouseError), {
      maxAttempts: options.maxRetries ?? 5,
      backoff: new ExponentialBackoff({ initialDelay: options.initialRetryDelayMs ?? 100, maxDelay: options.maxRetryDelayMs ?? 5_000 }),
    });
  }

  /** Queues the rows of one or more polls (see rows.ts `toRows`). Never waits. */
  write(rows: PollRows | readonly PollRows[]): void {
    if (this.closed) throw new WriterClosedError();
    this.queue.push(++this.writeSeq, Array.isArray(rows) ? (rows as readonly PollRows[]) : [rows as PollRows]);
    if (this.queue.reaches(this.maxBatchRows)) {
      this.kick('size');
    } else {
      this.armTimer();
    }
  }

  /** Rows waiting for a flush (not counting a flush in progress). */
  get queuedRows(): number {
    return this.queue.size;
  }

  stats(): WriterStats {
    return {
      queued: this.queue.queued, inserted: { ...this.totals.inserted }, duplicates: { ...this.totals.duplicates }, retries: this.totals.retries,
      failedFlushes: this.totals.failedFlushes,
    };
  }

  /** Resolves when every row queued before this call is stored; rejects with the insert's error otherwise. */
  flush(): Promise<void> {
    return this.waitStored('manual');
  }

  /** Stops taking rows and flushes what is queued. Does not close the client (its owner does). */
  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    await this.waitStored('close');
  }

  /**
   * Stops taking rows, as close() does, but drops the queued rows instead of inserting them, and
   * waits only for the insert under way (its failure ignored). For a consumer that stops: no
   * offset of a dropped row was committed, so Kafka hands those polls to the group's next member,
   * and the writer's idempotence skips whatever the insert under way stored. Waiters of dropped
   * rows are rejected. Returns how many rows were dropped.
   */
  async abandon(): Promise<number> {
    this.closed = true;
    this.clearTimer();
    const kept = this.flushingSeq ?? this.storedSeq;
    const dropped = this.queue.clear();
    const gone = new Error('the writer stopped before these rows were inserted; their offsets stay uncommitted');
    this.waiters = this.waiters.filter((waiter) => {
      if (waiter.seq <= kept) return true;
      waiter.reject(gone);
      return false;
    });
    await this.loop;
    return dropped;
  }

  /** Health: true when ClickHouse answers. */
  ping(): Promise<boolean> {
    return pingClickHouse(this.client);
  }

  private armTimer(): void {
    if (this.timer || this.closed || this.queue.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick('timer');
    }, this.flushIntervalMs);
    // Shutdown calls close(); a timer alone must not keep a finished process alive.
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private waitStored(reason: 'manual' | 'close'): Promise<void> {
    const seq = this.writeSeq;
    if (seq <= this.storedSeq) return Promise.resolve();
    const waiting = new Promise<void>((resolve, reject) => this.waiters.push({ seq, resolve, reject }));
    this.kick(reason);
    return waiting;
  }

  /**
   * Starts the flush loop unless it runs. Size and timer flushes report failures through onFlush
   * and the logger only (nobody awaits them); their rows stay queued and the next flush retries them.
   */
  private kick(reason: FlushReason): void {
    if (reason === 'size' || reason === 'timer') {
      if (this.backgroundReason === null || REASON_RANK[reason] > REASON_RANK[this.backgroundReason]) this.backgroundReason = reason;
    }
    if (this.loop) return;
    this.loop = this.drain();
  }

  /**
   * Flushes one after another while someone waits or a table is full, each taking at most
   * `maxBatchRows` rows per table (whole writes): rows that arrive meanwhile go into the next flush,
   * so ClickHouse inserts one batch while the caller prepares the next. Rows of a failed flush go
   * back to the front of the queue, and every waiter is rejected (a resolved flush() always means
   * "everything queued before me is stored"); the next flush() or timer retries them.
   */
  private async drain(): Promise<void> {
    try {
      // Let writes made in the same tick as the request join this flush.
      await Promise.resolve();
      for (;;) {
        const waiting = this.waiters.some((w) => w.seq > this.storedSeq);
        const reason: FlushReason | null = waiting
          ? (this.closed ? 'close' : 'manual')
          : this.backgroundReason ?? (this.queue.reaches(this.maxBatchRows) ? 'size' : null);
        this.backgroundReason = null;
        if (reason === null || this.queue.size === 0) break;
        const { batch, seq } = this.queue.take(this.maxBatchRows);
        this.flushingSeq = seq;
        try {
          await this.runFlush(reason, batch, seq);
        } catch (err) {
          for (const waiter of this.waiters.splice(0)) waiter.reject(err as Error);
          return;
        } finally {
          this.flushingSeq = null;
        }
        this.storedSeq = this.queue.size === 0 ? this.writeSeq : Math.max(this.storedSeq, seq);
        this.settleWaiters();
      }
      // Nothing queued for the remaining waiters (their rows were in flushes that already resolved).
      if (this.queue.size === 0) this.storedSeq = this.writeSeq;
      this.settleWaiters();
    } finally {
      // Synchronously after the loop's last look at the waiters (no await in between): a request
      // arriving from now on finds no loop and starts one.
      this.loop = null;
      this.armTimer();
    }
  }

  private settleWaiters(): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (waiter.seq > this.storedSeq) return true;
      waiter.resolve();
      return false;
    });
  }

  private nextIngestVersion(): number {
    this.lastIngestVersion = Math.max(Date.now(), this.lastIngestVersion + 1);
    return this.lastIngestVersion;
  }

  /**
   * One flush: polls first, shipments last (a shipments row never exists without its poll and
   * events, and no event or shipments row without its poll, which is what makes the plan's narrowed
   * checks exact). Each table is retried by the policy; the first table that still fails stops the
   * flush, and its rows and those of the tables not reached yet go back to the front of the queue.
   */
  private async runFlush(reason: FlushReason, batch: Batch, seq: number): Promise<void> {
    this.clearTimer();
    if (WRITER_TABLES.every((t) => batch[t].length === 0)) return;
    const report: FlushReport = { reason, rows: zero(), inserted: zero(), duplicates: zero(), checkedRows: zero(), retries: 0, durationMs: 0, checkMs: 0 };
    for (const t of WRITER_TABLES) report.rows[t] = batch[t].length;
    const started = performance.now();
    const version = this.nextIngestVersion();
    const stamp = { ingested_at: toClickHouseDateTime(version), ingest_version: version };
    const plan = this.dedupe ? new StoredPlan(this.client, batch) : null;
    try {
      for (const [index, table] of WRITER_TABLES.entries()) {
        const rows = batch[table] as AnyRow[];
        if (rows.length === 0) continue;
        const outcome = await this.policy
          .execute(({ attempt }) => {
            if (attempt > 0) report.retries++;
            return this.insertTable(table, rows, stamp, plan ? (fresh) => plan.storedAmong(table, attempt, fresh) : null);
          })
          .catch((err: unknown) => {
            const unstored = { ...batch };
            for (const earlier of WRITER_TABLES.slice(0, index)) unstored[earlier] = [];
            this.queue.requeue(seq, unstored);
            const { code, message } = clickHouseErrorInfo(err);
            throw new Error(
              `inserting ${rows.length} rows into ${table} failed: ${message}${code !== null ? ` (ClickHouse code ${code})` : ''}`,
              { cause: err },
            );
          });
        report.inserted[table] = outcome.inserted;
        report.duplicates[table] = outcome.duplicates;
      }
    } catch (err) {
      report.error = err as Error;
    }
    if (plan) {
      report.checkMs = plan.checkMs;
      report.checkedRows = plan.checkedRows;
    }
    report.durationMs = performance.now() - started;
    this.account(report);
    if (report.error) throw report.error;
  }

  /** Totals, logs and the onFlush listener: the one place a flush's outcome is recorded. */
  private account(report: FlushReport): void {
    this.totals.retries += report.retries;
    if (report.error) {
      this.totals.failedFlushes++;
      this.options.logger?.error({ reason: report.reason, err: report.error.message }, 'clickhouse flush failed; rows stay queued');
    } else {
      for (const t of WRITER_TABLES) {
        this.totals.inserted[t] += report.inserted[t];
        this.totals.duplicates[t] += report.duplicates[t];
      }
      if (report.retries > 0) this.options.logger?.warn({ retries: report.retries, reason: report.reason }, 'clickhouse flush needed retries');
    }
    this.notify(report);
  }

  /** A failing listener must not turn a stored batch into a failed flush. */
  private notify(report: FlushReport): void {
    try {
      this.options.onFlush?.(report);
    } catch (err) {
      this.options.logger?.error({ err: (err as Error).message }, 'clickhouse writer onFlush listener threw');
    }
  }

  /** One attempt: drop rows queued twice and those `storedAmong` finds stored, insert the rest. */
  private async insertTable(
    table: WriterTable, rows: AnyRow[], stamp: { ingested_at: string; ingest_version: number },
    storedAmong: ((fresh: AnyRow[]) => Promise<Set<string>>) | null,
  ): Promise<{ inserted: number; duplicates: number }> {
    const seen = new Set<string>();
    let fresh: AnyRow[] = [];
    for (const row of rows) {
      const id = identity(keyOf(table, row), row.mapping_version);
      if (seen.has(id)) continue;
      seen.add(id);
      fresh.push(row);
    }
    if (storedAmong) {
      const stored = await storedAmong(fresh);
      if (stored.size > 0) fresh = fresh.filter((row) => !stored.has(identity(keyOf(table, row), row.mapping_version)));
    }
    for (let i = 0; i < fresh.length; i += this.maxInsertRows) {
      const chunk = fresh.slice(i, i + this.maxInsertRows);
      // `table` is one of WRITER_TABLES, never outside input.
      const { stream } = await this.client.exec({ query: `INSERT INTO ${table} FORMAT JSONEachRow`, values: jsonEachRowStream(chunk, stamp) });
      await finished(stream.resume());
    }
    return { inserted: fresh.length, duplicates: rows.length - fresh.length };
  }
}
