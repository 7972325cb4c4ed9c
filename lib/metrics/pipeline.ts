import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { FlushReport } from '../clickhouse/writer.ts';

/** What the normalizer app exports on /metrics (its consumer and its ClickHouse writer report here). */
export interface NormalizerMetrics {
  /** Consumer lag: messages of a partition behind its end, as of the last batch fetched. */
  lag(topic: string, partition: number, messages: number): void;
  /** Polls handed to the normalizer (a re-delivered one counts again). */
  consumed(count: number): void;
  deadLetters(count: number): void;
  /** A batch waiting on a failed write (or DLQ send) tried again. */
  batchRetry(): void;
  /** The writer's report of one flush: rows written and duplicates skipped per table, retries, time. */
  flushed(report: FlushReport): void;
}

export function createNormalizerMetrics(registry: Registry): NormalizerMetrics {
  const registers = [registry];
  const lag = new Gauge({
    name: 'normalizer_consumer_lag', help: 'Messages behind the partition end, as of the last batch fetched', labelNames: ['topic', 'partition'], registers,
  });
  const consumed = new Counter({ name: 'normalizer_polls_consumed_total', help: 'Raw polls handed to the normalizer (re-deliveries count again)', registers });
  const dlq = new Counter({ name: 'normalizer_dlq_messages_total', help: 'Invalid polls sent to the dead-letter topic', registers });
  const batchRetries = new Counter({ name: 'normalizer_batch_retries_total', help: 'Retries of a batch waiting on a failed write or DLQ send', registers });
  const rows = new Counter({ name: 'normalizer_rows_written_total', help: 'Rows inserted into ClickHouse, by table', labelNames: ['table'], registers });
  const duplicates = new Counter({
    name: 'normalizer_duplicates_skipped_total', help: 'Rows not inserted because already stored (re-delivery) or queued twice, by table',
    labelNames: ['table'], registers,
  });
  const writeRetries = new Counter({ name: 'normalizer_write_retries_total', help: 'ClickHouse insert retries after transient failures', registers });
  const failedFlushes = new Counter({ name: 'normalizer_failed_flushes_total', help: 'Flushes that failed (their rows stay queued)', registers });
  const flushSeconds = new Histogram({
    name: 'normalizer_flush_seconds', help: 'Time of one writer flush (all tables)', registers,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  return {
    lag: (topic, partition, messages) => lag.set({ topic, partition: String(partition) }, messages),
    consumed: (count) => consumed.inc(count),
    deadLetters: (count) => dlq.inc(count),
    batchRetry: () => batchRetries.inc(),
    flushed(report) {
      for (const [table, count] of Object.entries(report.inserted)) if (count) rows.inc({ table }, count);
      for (const [table, count] of Object.entries(report.duplicates)) if (count) duplicates.inc({ table }, count);
      if (report.retries) writeRetries.inc(report.retries);
      if (report.error) failedFlushes.inc();
      flushSeconds.observe(report.durationMs / 1000);
    },
  };
}

/** What the poller app exports on /metrics besides the carrier poll metrics of lib/metrics. */
export interface PollerMetrics {
  poll(carrier: string, outcome: 'found' | 'not_found' | 'error'): void;
  tick(due: number, failed: boolean): void;
}

export function createPollerMetrics(registry: Registry): PollerMetrics {
  const registers = [registry];
  const polls = new Counter({ name: 'poller_polls_total', help: 'Re-polls made, by carrier and outcome', labelNames: ['carrier', 'outcome'], registers });
  const ticks = new Counter({ name: 'poller_ticks_total', help: 'Poller ticks, by outcome', labelNames: ['outcome'], registers });
  const due = new Gauge({ name: 'poller_due_shipments', help: 'Shipments due at the last tick', registers });
  return {
    poll: (carrier, outcome) => polls.inc({ carrier, outcome }),
    tick(count, failed) {
      ticks.inc({ outcome: failed ? 'failed' : 'ok' });
      if (!failed) due.set(count);
    },
  };
}

/** What a webhook dispatcher exports (the dispatcher app's, or the embedded default's in-process one). */
export interface DispatcherMetrics {
  /** One delivery attempt: the endpoint's HTTP status, or null when it did not answer. */
  attempt(statusCode: number | null): void;
}

export function createDispatcherMetrics(registry: Registry): DispatcherMetrics {
  const attempts = new Counter({
    name: 'webhook_delivery_attempts_total', help: 'Delivery attempts by outcome', labelNames: ['outcome'], registers: [registry],
  });
  return {
    attempt(code) {
      attempts.inc({ outcome: code === null ? 'no_answer' : code < 300 && code >= 200 ? 'success' : `http_${Math.floor(code / 100)}xx` });
    },
  };
}

/** What a process that sends customer notices exports (the embedded API, or the dispatcher app). */
export interface NoticeMetrics {
  /** A notice reached its final state: its channel (none when never sent), its status and how long since it was made. */
  settled(channel: string | null, status: string, ageMs: number): void;
}

export function createNoticeMetrics(registry: Registry): NoticeMetrics {
  const settled = new Counter({
    name: 'customer_notices_total', help: 'Customer notices by final status and channel', labelNames: ['channel', 'status'], registers: [registry],
  });
  const latency = new Histogram({
    name: 'customer_notice_latency_seconds', help: 'From a notice made (the change) to it sent', buckets: [0.1, 0.5, 1, 5, 30, 300, 3600, 43_200],
    registers: [registry],
  });
  return {
    settled(channel, status, ageMs) {
      settled.inc({ channel: channel ?? 'none', status });
      if (status === 'sent') latency.observe(ageMs / 1000);
    },
  };
}
