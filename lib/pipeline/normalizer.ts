import type { Consumer, Kafka, KafkaMessage, Producer } from 'kafkajs';
import type { PollRows } from '../clickhouse/rows.ts';
import { DLQ_TOPIC, POLLS_TOPIC, ensureTopics } from '../kafka/topics.ts';
import type { RuleSet } from '../normalize/index.ts';
import { processPollMessage } from './process-poll.ts';

/** Where normalized rows go: the batched ClickHouse writer (flush = durably written). */
export interface RowSink {
  write(rows: PollRows | readonly PollRows[]): void;
  flush(): Promise<void>;
}

/**
 * How the normalizer's consumer fetches (kafkajs options). bench/pipeline.ts reads its consume-only
 * baseline with the same settings, so the two rates compare like with like.
 */
export interface ConsumerTuning {
  /** Most bytes fetched per partition per request. */
  maxBytesPerPartition: number;
  /** Most bytes per fetch response. */
  maxBytes: number;
  /** Partitions whose batches are handled at once (their rows share the writer's flushes). */
  partitionsConsumedConcurrently: number;
}

/**
 * Measured with `npm run bench -- pipeline` (20,000 polls, 2-core machine): kafkajs' defaults (1 MiB,
 * one partition at a time) gave ~900-1,100 polls/s; all six partitions at once with 2 MiB fetches
 * ~1,900-2,000 (fewer, larger flushes: the batches of one fetch share the writer's flush). 4 MiB
 * was no faster and holds twice the memory.
 */
export const DEFAULT_CONSUMER_TUNING: ConsumerTuning = {
  maxBytesPerPartition: 2_097_152,
  maxBytes: 12_582_912,
  partitionsConsumedConcurrently: 6,
};

export interface NormalizerOptions {
  kafka: Kafka;
  sink: RowSink;
  rules: RuleSet;
  resolveCarrier: (name: string) => string | null;
  groupId?: string;
  /** The raw-poll topic to consume (default POLLS_TOPIC); benchmarks use a throw-away topic. */
  topic?: string;
  /** Fetch settings; default DEFAULT_CONSUMER_TUNING. */
  tuning?: Partial<ConsumerTuning>;
  log?: (level: 'info' | 'warn' | 'error', message: string, details?: object) => void;
  /** Called per batch with how many scans no rule mapped (metrics). */
  onUnmapped?: (count: number) => void;
}

export interface BatchResult {
  written: number;
  dlq: number;
}

/**
 * The normalizer: a consumer group on the raw-poll topic. Each batch is normalized with the
 * shared pure function, written through the batched writer, and only after the write is durable
 * are its offsets committed; a re-delivered batch is harmless because the writer skips rows that
 * are already stored. Invalid records go to the DLQ topic with the reason.
 */
export class NormalizerConsumer {
  private readonly consumer: Consumer;
  private readonly dlq: Producer;
  private running = false;
  private lastBatchError: Error | null = null;
  private readonly tuning: ConsumerTuning;

  constructor(private readonly options: NormalizerOptions) {
    this.tuning = { ...DEFAULT_CONSUMER_TUNING, ...options.tuning };
    this.consumer = options.kafka.consumer({
      groupId: options.groupId ?? 'tracking-normalizer', allowAutoTopicCreation: false,
      maxBytesPerPartition: this.tuning.maxBytesPerPartition, maxBytes: this.tuning.maxBytes,
    });
    this.dlq = options.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  }

  async start(): Promise<void> {
    const admin = this.options.kafka.admin();
    await admin.connect();
    await ensureTopics(admin);
    await admin.disconnect();
    await this.dlq.connect();
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.options.topic ?? POLLS_TOPIC, fromBeginning: true });
    this.running = true;
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.tuning.partitionsConsumedConcurrently,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        if (!isRunning() || isStale() || batch.messages.length === 0) return;
        try {
          await this.handleBatch(batch.messages);
          this.lastBatchError = null;
        } catch (err) {
          // Nothing committed: kafkajs re-delivers the batch once the failure clears.
          this.lastBatchError = err as Error;
          this.options.log?.('error', 'normalizer batch failed; it will be retried', { error: (err as Error).message });
          throw err;
        }
        const last = batch.messages[batch.messages.length - 1]!;
        await this.consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() }]);
        // Move the fetch position on too. With eachBatchAutoResolve off, kafkajs fetches from the last
        // *resolved* offset, not the committed one: without this every fetch handed the same messages
        // back (the writer's dedupe hid it, at the cost of re-normalizing them many times a second).
        resolveOffset(last.offset);
        await heartbeat();
      },
    });
  }

  /** Normalizes and durably writes one batch; invalid messages go to the DLQ. Public for tests. */
  async handleBatch(messages: readonly Pick<KafkaMessage, 'key' | 'value' | 'offset' | 'headers'>[]): Promise<BatchResult> {
    const rows: PollRows[] = [];
    const dead: { key: Buffer | null; value: string }[] = [];
    let unmapped = 0;
    for (const message of messages) {
      const value = message.value?.toString('utf8') ?? null;
      const mode = message.headers?.mode?.toString() === 'test' ? 'test' : 'live';
      const outcome = processPollMessage(value, this.options.rules, this.options.resolveCarrier, mode);
      if (outcome.kind === 'rows') {
        rows.push(outcome.rows);
        unmapped += outcome.unmapped;
      } else {
        dead.push({ key: message.key ?? null, value: JSON.stringify({ reason: outcome.reason, offset: message.offset, value }) });
      }
    }
    if (dead.length) {
      await this.dlq.send({ topic: DLQ_TOPIC, messages: dead.map((d) => ({ key: d.key, value: d.value })) });
      this.options.log?.('warn', `sent ${dead.length} invalid polls to ${DLQ_TOPIC}`);
    }
    if (rows.length) {
      this.options.sink.write(rows);
      await this.options.sink.flush();
    }
    if (unmapped) this.options.onUnmapped?.(unmapped);
    return { written: rows.length, dlq: dead.length };
  }

  /** Healthy while consuming and the last batch did not fail. */
  isHealthy(): boolean {
    return this.running && this.lastBatchError === null;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.consumer.disconnect();
    await this.dlq.disconnect();
  }
}
