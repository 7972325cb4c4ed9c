import type { Consumer, Kafka, KafkaMessage, Producer } from 'kafkajs';
import { kafkajs } from '../kafka/kafkajs.ts';
import type { PollRows, RowSink } from '../clickhouse/rows.ts';
import type { NormalizerMetrics } from '../metrics/pipeline.ts';
import { DLQ_TOPIC, POLLS_TOPIC, ensureTopics } from '../kafka/topics.ts';
import type { RuleSet } from '../normalize/index.ts';
import { processPollMessage } from './process-poll.ts';

/**
 * How the normalizer's consumer fetches (kafkajs options). bench/pipeline.ts reads its consume-only
 * baseline with maxBytes and the partition concurrency from here, but 2 MiB per partition (the
 * fastest bare loop, and the value before the pipeline overlapped).
 */
export interface ConsumerTuning {
  /** Most bytes fetched per partition per request. */
  maxBytesPerPartition: number;
  /** Most bytes per fetch response. */
  maxBytes: number;
  /** Partitions whose batches are handled at once (their rows share the writer's flushes). */
  partitionsConsumedConcurrently: number;
  /**
   * Most messages handed to the writer and not yet durably written. Past it, eachBatch waits for
   * its own batch to be written before returning (backpressure: fetching stops while ClickHouse is
   * slow or away, and memory stays bounded).
   */
  maxPendingMessages: number;
}

/**
 * Measured with `npm run bench -- pipeline` (20,000 ten-scan polls, 2-core machine shared with
 * another benchmark, so ±30 %). While eachBatch awaited the write: kafkajs' defaults (1 MiB, one
 * partition at a time) gave ~900-1,100 polls/s; six partitions at once with 2 MiB fetches
 * ~1,900-2,000. Now that eachBatch only queues rows:
 * - maxBytesPerPartition 512 KiB (~270 polls per batch): between batches the event loop gets a turn
 *   for the writer's HTTP responses, so smaller batches keep ClickHouse busy while Node normalizes;
 *   2 MiB batches (~830 polls, ~150 ms of synchronous work each) measured lower or equal.
 * - partitionsConsumedConcurrently 6 (all partitions of the topic): batches of all partitions share
 *   the writer's flushes.
 * - maxPendingMessages 20,000: backpressure is for outages and slow ClickHouse, not the steady
 *   state; 2,000-4,000 stalled normalizing behind the writer and measured 25 % slower.
 */
export const DEFAULT_CONSUMER_TUNING: ConsumerTuning = {
  maxBytesPerPartition: 524_288,
  maxBytes: 12_582_912,
  partitionsConsumedConcurrently: 6,
  maxPendingMessages: 20_000,
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
  /** Consumer lag, polls consumed, dead letters and batch retries (the app's /metrics). */
  metrics?: Pick<NormalizerMetrics, 'lag' | 'consumed' | 'deadLetters' | 'batchRetry'>;
}

export interface BatchResult {
  written: number;
  dlq: number;
}

/** Where a batch's offsets and dead letters go: the consumer's Kafka client, or a test's recorder. */
export interface BatchFlowPorts {
  /** Commits `offset` (the next offset to read) of a partition. */
  commit(topic: string, partition: number, offset: string): Promise<void>;
  /** Sends invalid records to the dead-letter topic (one attempt). */
  sendDeadLetters(dead: readonly { key: Buffer | null; value: string }[]): Promise<void>;
}

export interface BatchFlowOptions extends Pick<NormalizerOptions, 'sink' | 'rules' | 'resolveCarrier' | 'log' | 'onUnmapped' | 'metrics'> {
  ports: BatchFlowPorts;
  /** See ConsumerTuning. */
  maxPendingMessages: number;
  /** Wait before retry `attempt` (1, 2, ...) of a failed write or DLQ send; default 0.5 s doubling to 10 s. */
  retryDelayMs?: (attempt: number) => number;
}

/** One fetched batch as the flow needs it (kafkajs' eachBatch payload has these). */
export interface FetchedBatch {
  topic: string;
  partition: number;
  messages: readonly Pick<KafkaMessage, 'key' | 'value' | 'offset' | 'headers'>[];
  /**
   * The batch's last offset counting what is never handed over as a message: the raw-poll log is
   * written in transactions, so a batch usually ends in a commit marker (a control record).
   */
  lastOffset?: string;
  /** Moves the fetch position past `offset` (not a commit). */
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
}

/** Backoff between retries of a failed write or DLQ send: 0.5 s doubling to 10 s. */
function retryDelayMs(attempt: number): number {
  return Math.min(500 * 2 ** (attempt - 1), 10_000);
}

/** kafkajs' errors that make a member re-join its group (kafkajs/src/errors.js `isRebalancing`, not exported). */
const REBALANCING_ERRORS = new Set(['REBALANCE_IN_PROGRESS', 'NOT_COORDINATOR_FOR_GROUP', 'ILLEGAL_GENERATION']);
function isRebalancing(err: unknown): boolean {
  return REBALANCING_ERRORS.has((err as { type?: unknown } | null)?.type as string);
}

/** How long a stop waits for the last flush before leaving the queued batches to Kafka (BatchFlow.stop). */
const STOP_FLUSH_BUDGET_MS = 3_000;

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * What the normalizer does with each fetched batch, apart from Kafka's client (so it is tested
 * without a broker, lib/pipeline/batch-flow.test.ts). Each batch is normalized with the shared pure
 * function and queued in the batched writer; eachBatch then returns at once (the next fetch is
 * normalized while ClickHouse stores this one) and the batch's offsets are committed in the
 * background once the writer's flush holding its rows has resolved, in order per partition (one
 * promise chain each), never ahead of durable rows. A re-delivered batch is harmless because the
 * writer skips rows that are already stored. Invalid records go to the DLQ topic with the reason.
 *
 * Failures are retried in place: the writer keeps the rows of a failed flush queued, so the batch
 * waits (and with it every later commit of its partition) until a later flush() resolves; a failed
 * DLQ send is sent again. Meanwhile backpressure stops fetching. If the process stops or dies
 * first, nothing past the last durable batch was committed and Kafka re-delivers the rest.
 */
export class BatchFlow {
  private stopping = false;
  /** The failure a batch is waiting on (health), null when none. */
  lastBatchError: Error | null = null;
  /** Messages handed to the writer whose rows are not durable yet. */
  private pendingMessages = 0;
  /** Per topic:partition, the last batch's commit (each one waits for the one before). */
  private readonly commits = new Map<string, Promise<void>>();
  /** Resolves when stop() gives up on unwritten batches: retry waits end early. */
  private stopped!: () => void;
  private readonly stoppedSignal = new Promise<void>((resolve) => { this.stopped = resolve; });
  private readonly retryDelayMs: (attempt: number) => number;

  private readonly options: BatchFlowOptions;
  constructor(options: BatchFlowOptions) {
    this.options = options;
    this.retryDelayMs = options.retryDelayMs ?? retryDelayMs;
  }

  /** Commits not yet settled (a stop has something to wait for). */
  get committing(): boolean {
    return this.commits.size > 0;
  }

  /** kafkajs' eachBatch: queue the rows, chain the commit, apply backpressure. */
  async eachBatch(batch: FetchedBatch): Promise<void> {
    const count = batch.messages.length;
    if (count === 0 || this.stopping) return;
    const last = batch.messages[count - 1]!;
    this.options.metrics?.consumed(count);
    this.pendingMessages += count;
    // Normalizing and queueing happen synchronously inside this call; the promise settles
    // once the rows are durable (and dead letters sent).
    const done = this.durably(this.handleBatch(batch.messages)).finally(() => { this.pendingMessages -= count; });
    // Past the batch's commit marker too: committed offsets then reach the partition's end (no
    // lag of one left behind each transaction), and a restart does not fetch the marker again.
    const end = batch.lastOffset !== undefined && BigInt(batch.lastOffset) > BigInt(last.offset) ? batch.lastOffset : last.offset;
    const committed = this.commitAfter(batch.topic, batch.partition, (BigInt(end) + 1n).toString(), done);
    // Move the fetch position on. With eachBatchAutoResolve off, kafkajs fetches from the last
    // *resolved* offset, not the committed one: without this every fetch would hand the same
    // messages back. Resolving is not committing: a restart reads from the committed offset.
    batch.resolveOffset(end);
    const heartbeat = () => this.heartbeatOrDrain(batch.heartbeat);
    if (this.pendingMessages > this.options.maxPendingMessages) await this.waitFor(committed, heartbeat);
    // Give the event loop's I/O phase a turn before the next batch: kafkajs hands over batches it
    // already fetched through promises alone, which would starve the writer's HTTP responses
    // until normalizing ran out of batches (ClickHouse then idles instead of inserting meanwhile).
    await yieldToIo();
    // Last, so kafkajs' own heartbeat right after this batch finds the interval not yet elapsed
    // and sends nothing: the rebalance is noticed here, where the flow can drain first.
    await heartbeat();
  }

  /**
   * Heartbeats; when the group is rebalancing, first waits until every batch handed to the writer
   * is durable (and its commit tried), then rethrows so kafkajs re-joins. kafkajs has no "partitions
   * revoked" callback and re-joins as soon as a heartbeat fails; without this wait, a partition's
   * new owner re-reads batches whose rows this process is still inserting, finds them not stored
   * yet, and inserts them a second time. The group waits for this member (up to its rebalance
   * timeout, 60 s) before handing the partitions over.
   */
  private async heartbeatOrDrain(heartbeat: () => Promise<void>): Promise<void> {
    try {
      await heartbeat();
    } catch (err) {
      if (isRebalancing(err)) await this.drain();
      throw err;
    }
  }

  /** Resolves once every queued batch is durable and its commit settled (or the flow stopped). */
  private async drain(): Promise<void> {
    while (this.commits.size > 0) await Promise.allSettled([...this.commits.values()]);
  }

  /**
   * Resolves true once `written` has, or once a retried flush/DLQ send has put the batch's rows in
   * ClickHouse; false if the flow stops first (the batch is then left uncommitted).
   */
  private async durably(written: Promise<BatchResult>): Promise<boolean> {
    let failure: unknown;
    try {
      // A stop gives up on a batch still being written: it stays uncommitted.
      if (!(await Promise.race([written.then(() => true), this.stoppedSignal.then(() => false)]))) return false;
      this.lastBatchError = null;
      return true;
    } catch (err) {
      if (this.stopping) return false;
      failure = err;
    }
    for (let attempt = 1; ; attempt++) {
      this.lastBatchError = failure as Error;
      this.options.log?.('error', 'normalizer batch not written yet; retrying', { error: (failure as Error).message, attempt });
      await this.delay(this.retryDelayMs(attempt));
      this.options.metrics?.batchRetry();
      if (this.stopping) return false;
      try {
        // The writer put the failed rows back in its queue: a resolved flush() has stored them.
        await this.options.sink.flush();
        this.lastBatchError = null;
        return true;
      } catch (err) {
        failure = err;
      }
    }
  }

  /** Chains the batch's offset commit after its rows are durable and after the partition's previous commit. */
  private commitAfter(topic: string, partition: number, offset: string, durable: Promise<boolean>): Promise<void> {
    const key = `${topic}:${partition}`;
    const previous = this.commits.get(key) ?? Promise.resolve();
    const commit = previous.then(async () => {
      // Not durable means stopping: nothing of this partition is committed from here on.
      if (!(await durable)) return;
      try {
        await this.options.ports.commit(topic, partition, offset);
      } catch (err) {
        // A rebalance or a broker away: the next batch's commit covers this one, else Kafka
        // re-delivers it (stored rows are skipped).
        this.options.log?.('warn', 'offset commit failed', { topic, partition, offset, error: (err as Error).message });
      }
    });
    this.commits.set(key, commit);
    void commit.finally(() => { if (this.commits.get(key) === commit) this.commits.delete(key); });
    return commit;
  }

  /** Sleeps `ms`, or less when the flow stops meanwhile. */
  private delay(ms: number): Promise<void> {
    return Promise.race([sleep(ms), this.stoppedSignal]);
  }

  /** Waits for `promise`, heartbeating meanwhile so a long ClickHouse outage does not cost the group membership. */
  private async waitFor(promise: Promise<unknown>, heartbeat: () => Promise<void>): Promise<void> {
    let settled = false;
    void promise.finally(() => { settled = true; });
    while (!settled && !this.stopping) {
      await Promise.race([promise, this.delay(1_000)]);
      if (!settled) await heartbeat();
    }
  }

  /**
   * Normalizes one batch and queues its rows in the writer (synchronously, before the first await);
   * resolves once they are durably written and invalid messages are in the DLQ, rejects if the
   * write fails. Public for the pipeline test's and the bench's taps.
   */
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
    let flushed: Promise<void> | null = null;
    if (rows.length) {
      this.options.sink.write(rows);
      flushed = this.options.sink.flush();
      // Awaited below; if the DLQ send fails first, this rejection must not go unhandled.
      flushed.catch(() => undefined);
    }
    if (unmapped) this.options.onUnmapped?.(unmapped);
    if (dead.length) await this.sendDeadLetters(dead);
    if (flushed) await flushed;
    return { written: rows.length, dlq: dead.length };
  }

  /** Sends dead letters, retrying until Kafka takes them (their batch is not committed before). */
  private async sendDeadLetters(dead: { key: Buffer | null; value: string }[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.options.ports.sendDeadLetters(dead);
        this.options.metrics?.deadLetters(dead.length);
        this.options.log?.('warn', `sent ${dead.length} invalid polls to ${DLQ_TOPIC}`);
        return;
      } catch (err) {
        if (this.stopping) throw err;
        this.lastBatchError = err as Error;
        this.options.log?.('error', `sending ${dead.length} invalid polls to ${DLQ_TOPIC} failed; retrying`, { error: (err as Error).message, attempt });
        await this.delay(this.retryDelayMs(attempt));
        this.options.metrics?.batchRetry();
      }
    }
  }

  /**
   * Lets the batches already queued be written and committed (one more flush, for at most
   * `flushBudgetMs`; if it fails or takes longer they stay uncommitted and are re-delivered to the
   * group's next member, whose writer skips the rows already stored), then gives up on the rest.
   * `pause` stops fetching first. The budget keeps a stop within the process's deadline however
   * much was queued (up to maxPendingMessages, several seconds of inserts on a busy machine).
   */
  async stop(pause: () => void = () => {}, flushBudgetMs = STOP_FLUSH_BUDGET_MS): Promise<void> {
    if (this.commits.size > 0) {
      pause();
      // ClickHouse away: the flush fails at once, nothing more is committed.
      await Promise.race([this.options.sink.flush().catch(() => undefined), sleep(flushBudgetMs)]);
    }
    this.stopping = true;
    this.stopped();
    await Promise.allSettled([...this.commits.values()]);
  }
}

/** The normalizer: a consumer group on the raw-poll topic, each batch going through a BatchFlow. */
export class NormalizerConsumer {
  private readonly consumer: Consumer;
  private readonly dlq: Producer;
  private running = false;
  private readonly tuning: ConsumerTuning;
  /** The batch handling (public for the pipeline test's and the bench's taps on handleBatch). */
  readonly flow: BatchFlow;

  private readonly options: NormalizerOptions;
  constructor(options: NormalizerOptions) {
    this.options = options;
    this.tuning = { ...DEFAULT_CONSUMER_TUNING, ...options.tuning };
    this.consumer = options.kafka.consumer({
      groupId: options.groupId ?? 'tracking-normalizer', allowAutoTopicCreation: false,
      maxBytesPerPartition: this.tuning.maxBytesPerPartition, maxBytes: this.tuning.maxBytes,
    });
    // The partitioner named (kafkajs warns when it is left implicit): the v2 default, murmur2 as the
    // Java client, which the DLQ has always used, so keys land where they did.
    this.dlq = options.kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: kafkajs().Partitioners.DefaultPartitioner });
    this.flow = new BatchFlow({
      ...options,
      maxPendingMessages: this.tuning.maxPendingMessages,
      ports: {
        commit: (topic, partition, offset) => this.consumer.commitOffsets([{ topic, partition, offset }]),
        sendDeadLetters: async (dead) => { await this.dlq.send({ topic: DLQ_TOPIC, messages: dead.map((d) => ({ key: d.key, value: d.value })) }); },
      },
    });
  }

  private get topic(): string {
    return this.options.topic ?? POLLS_TOPIC;
  }

  async start(): Promise<void> {
    const admin = this.options.kafka.admin();
    await admin.connect();
    await ensureTopics(admin);
    await admin.disconnect();
    await this.dlq.connect();
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: true });
    this.running = true;
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.tuning.partitionsConsumedConcurrently,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        if (!isRunning() || isStale() || !this.running) return;
        this.options.metrics?.lag(batch.topic, batch.partition, Number(batch.offsetLag()));
        await this.flow.eachBatch({
          topic: batch.topic, partition: batch.partition, messages: batch.messages, lastOffset: batch.lastOffset(), resolveOffset, heartbeat,
        });
      },
    });
  }

  /** Healthy while consuming and no batch is waiting on a failed write. */
  isHealthy(): boolean {
    return this.running && this.flow.lastBatchError === null;
  }

  /** Stops fetching, lets the queued batches be written and committed (BatchFlow.stop), leaves the group. */
  async stop(): Promise<void> {
    this.running = false;
    await this.flow.stop(() => {
      try {
        this.consumer.pause([{ topic: this.topic }]);
      } catch {
        // Not consuming (a crashed run): nothing more will be fetched anyway.
      }
    });
    await this.consumer.disconnect();
    await this.dlq.disconnect();
  }
}
