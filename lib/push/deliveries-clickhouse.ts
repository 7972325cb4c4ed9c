import type { ClickHouseClient } from '@clickhouse/client';
import { toClickHouseDateTime } from '../clickhouse/datetime.ts';
import type { DeliveryRow } from './attempt-rows.ts';

export interface DeliveryWriterOptions {
  /** Rows per insert at most; a full batch is written at once (default 2,000). */
  maxBatchRows?: number;
  /** A trickle is written at least this often (default 1 s). */
  flushIntervalMs?: number;
  /** Rows kept while ClickHouse is away; past it the oldest are dropped and counted (default 200,000). */
  maxQueuedRows?: number;
  log?: (level: 'warn' | 'error', message: string) => void;
}

/**
 * Every delivery attempt as a row of ClickHouse `webhook_deliveries`, inserted in batches (tiny
 * inserts make too many parts). While ClickHouse is away rows wait in memory (bounded) and are
 * retried; they never hold up a delivery. Each row is also kept in the push state until written
 * (attempt-rows.ts), so a row this process loses (killed, or dropped past the bound) is written
 * by the next dispatcher's reconciler.
 */
export class DeliveryWriter {
  private queue: { row: Record<string, unknown>; written?: () => void }[] = [];
  private writing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly maxBatchRows: number;
  private readonly maxQueuedRows: number;
  dropped = 0;
  written = 0;

  private readonly client: ClickHouseClient;
  private readonly options: DeliveryWriterOptions;
  constructor(client: ClickHouseClient, options: DeliveryWriterOptions = {}) {
    this.client = client;
    this.options = options;
    this.maxBatchRows = options.maxBatchRows ?? 2_000;
    this.maxQueuedRows = options.maxQueuedRows ?? 200_000;
    this.timer = setInterval(() => { void this.flush().catch(() => {}); }, options.flushIntervalMs ?? 1_000);
    this.timer.unref();
  }

  /** Queues a row; `written` is called once ClickHouse has it (the outbox then lets it go). */
  write(row: DeliveryRow, written?: () => void): void {
    this.queue.push({ row: { ...row, attempted_at: toClickHouseDateTime(Date.parse(row.attempted_at)) }, written });
    if (this.queue.length > this.maxQueuedRows) {
      this.dropped += this.queue.length - this.maxQueuedRows;
      this.queue.splice(0, this.queue.length - this.maxQueuedRows);
    }
    if (this.queue.length >= this.maxBatchRows) void this.flush().catch(() => {});
  }

  /** Writes everything queued so far (one insert at a time); rejects when ClickHouse refused. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatchRows);
    this.writing = this.client.insert({ table: 'webhook_deliveries', values: batch.map((q) => q.row), format: 'JSONEachRow' })
      .then(() => {
        this.written += batch.length;
        for (const q of batch) q.written?.();
      })
      .catch((err: unknown) => {
        this.queue.unshift(...batch);
        this.options.log?.('warn', `webhook_deliveries insert failed (${batch.length} rows kept for the next try): ${(err as Error).message}`);
        throw err;
      })
      .finally(() => { this.writing = null; });
    await this.writing;
    if (this.queue.length >= this.maxBatchRows) await this.flush();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
