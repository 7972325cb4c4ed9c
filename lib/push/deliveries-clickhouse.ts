import type { ClickHouseClient } from '@clickhouse/client';
import { toClickHouseDateTime } from '../clickhouse/datetime.ts';
import type { DeliveryRow } from './dispatcher.ts';

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
 * inserts make too many parts). The attempt's outcome is already in the state store, so a row is
 * analytics: while ClickHouse is away rows wait in memory (bounded) and are retried; they never
 * hold up a delivery.
 */
export class DeliveryWriter {
  private queue: Record<string, unknown>[] = [];
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

  write(row: DeliveryRow): void {
    this.queue.push({ ...row, attempted_at: toClickHouseDateTime(Date.parse(row.attempted_at)) });
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
    this.writing = this.client.insert({ table: 'webhook_deliveries', values: batch, format: 'JSONEachRow' })
      .then(() => { this.written += batch.length; })
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
