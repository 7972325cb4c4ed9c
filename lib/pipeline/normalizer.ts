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

export interface NormalizerOptions {
  kafka: Kafka;
  sink: RowSink;
  rules: RuleSet;
  resolveCarrier: (name: string) => string | null;
  groupId?: string;
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

  constructor(private readonly options: NormalizerOptions) {
    this.consumer = options.kafka.consumer({ groupId: options.groupId ?? 'tracking-normalizer', allowAutoTopicCreation: false });
    this.dlq = options.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  }

  async start(): Promise<void> {
    const admin = this.options.kafka.admin();
    await admin.connect();
    await ensureTopics(admin);
    await admin.disconnect();
    await this.dlq.connect();
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: POLLS_TOPIC, fromBeginning: true });
    this.running = true;
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, heartbeat, isRunning, isStale }) => {
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
