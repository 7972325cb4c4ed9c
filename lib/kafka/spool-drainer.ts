import { rmSync } from 'node:fs';
import type { Kafka, Producer } from 'kafkajs';
import { kafkajs } from './kafkajs.ts';
import { SECOND_MS } from '../time/index.ts';
import { SPOOL_START, comparePositions, packPosition, unpackPosition, type Spool, type SpoolPosition } from './spool.ts';
import type { SpoolSlot } from './spool-slot.ts';
import { POLLS_TOPIC, SPOOL_PROGRESS_TOPIC, ensureTopics } from './topics.ts';

/** One spooled poll: its key, its JSON, the key mode, and when it was spooled (epoch ms). */
export interface SpooledPoll {
  key: string;
  value: string;
  mode: string;
  t?: number;
}

export interface DrainerOptions {
  kafka: Kafka;
  slot: SpoolSlot;
  spool: Spool;
  topic?: string;
  /** Messages per transaction at most (default 500). */
  batchSize?: number;
  /** Wait between attempts while the broker is away (default 1 s). */
  retryDelayMs?: number;
  /** A slot left by a process that died: drained to its end, then removed. */
  adopted?: boolean;
  onError?: (err: unknown) => void;
  onRecovered?: (downForMs: number) => void;
}

/** What a transaction carries at most: Kafka refuses record batches over ~1 MiB per partition. */
const MAX_CHUNK_BYTES = 512 * 1024;
/** A transaction that has not ended by then is given up (the next producer's start fences it). */
const TRANSACTION_TIMEOUT_MS = 15 * SECOND_MS;

/**
 * Sends one spool slot to the raw-poll topic, exactly once. Each chunk of lines goes in one Kafka
 * transaction together with the slot's position after it, committed as the offset of a progress
 * group (`trk-poll-spool-<slot id>`, topic tracking.poll-spool-progress.v1): the messages and the
 * position land together or not at all. After any failure (broker away, a timeout, this process
 * killed mid-drain) the next producer with the same transactional id fences the old one — Kafka
 * finishes or aborts its open transaction — and reads the committed position back, so nothing is
 * sent twice and nothing is skipped. Consumers read committed messages only (kafkajs' default).
 */
export class SpoolDrainer {
  private readonly options: DrainerOptions;
  private producer: Producer | null = null;
  /** The position after the last line Kafka has committed; null until it is known (connected once). */
  private sent: SpoolPosition | null = null;
  private closing = false;
  private wakeUp: (() => void) | null = null;
  private waiters: { target: SpoolPosition; resolve: () => void }[] = [];
  private readonly loop: Promise<void>;
  /** When Kafka stopped taking polls (null while it takes them) and why. */
  failingSince: number | null = null;
  lastError: string | null = null;
  /** When the oldest line not yet on Kafka was spooled (null: none pending, or not known yet). */
  pendingSince: number | null = null;
  finished = false;

  constructor(options: DrainerOptions) {
    this.options = options;
    this.loop = this.run();
  }

  /** A line was appended: send it soon. */
  wake(): void {
    if (this.pendingSince === null) this.pendingSince = Date.now();
    this.wakeUp?.();
  }

  /** Bytes spooled and not yet on Kafka. */
  pendingBytes(): number {
    return this.options.spool.bytesAfter(this.sent ?? this.options.spool.savedPosition() ?? SPOOL_START);
  }

  /** Resolves once everything up to `target` is on Kafka (or the drainer closed). */
  until(target: SpoolPosition): Promise<void> {
    if (this.closing || this.finished || (this.sent && comparePositions(this.sent, target) >= 0)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ target, resolve }));
  }

  /** Stops after the transaction under way (cut short while Kafka is away) and gives the slot up. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.failingSince !== null) await this.dropProducer();
    this.wakeUp?.();
    await this.loop;
    await this.dropProducer();
    for (const w of this.waiters.splice(0)) w.resolve();
    if (this.finished) return;
    if (this.options.adopted) this.options.spool.close();
    await this.options.slot.release();
  }

  private async run(): Promise<void> {
    const retryDelayMs = this.options.retryDelayMs ?? SECOND_MS;
    while (!this.closing) {
      try {
        if (!this.producer) {
          await this.connect();
          this.settleWaiters(); // the position read back may already cover them
        }
        const chunk = await this.options.spool.read(this.sent!, MAX_CHUNK_BYTES);
        if (!chunk) {
          this.pendingSince = null;
          if (this.options.adopted) return this.finish();
          await this.idle();
          continue;
        }
        const lines = chunk.lines.slice(0, this.options.batchSize ?? 500);
        const polls = lines.map((line) => JSON.parse(line) as SpooledPoll);
        this.pendingSince = polls[0]!.t ?? this.pendingSince ?? Date.now();
        const next = lines.length === chunk.lines.length ? chunk.next : advance(chunk.start, lines);
        await this.sendInTransaction(polls, next);
        this.committed(next);
      } catch (err) {
        if (this.closing) break;
        this.failed(err);
        await this.dropProducer();
        await this.sleep(retryDelayMs);
      }
    }
  }

  /**
   * A producer of the slot's transactional id: its first transaction fences any earlier one (ours,
   * before a crash or a timeout) and settles that one's open transaction; only then is the
   * committed position read, so it includes whatever that transaction committed.
   */
  private async connect(): Promise<void> {
    const { kafka, slot, spool } = this.options;
    const producer = kafka.producer({
      transactionalId: `trk-poll-spool-${slot.id}`, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 30 * SECOND_MS,
      allowAutoTopicCreation: false, createPartitioner: kafkajs().Partitioners.DefaultPartitioner,
    });
    this.producer = producer;
    const admin = kafka.admin();
    try {
      await bounded(producer.connect());
      await admin.connect();
      await bounded(ensureTopics(admin));
      const fence = await bounded(producer.transaction());
      await fence.abort();
      const [progress] = await bounded(admin.fetchOffsets({ groupId: this.group(), topics: [SPOOL_PROGRESS_TOPIC] }));
      const committed = unpackPosition(progress?.partitions.find((p) => p.partition === 0)?.offset ?? '-1');
      // The slot's own copy wins when it is ahead: a new Kafka cluster has no progress group.
      const local = spool.savedPosition();
      const known = [committed, local, SPOOL_START].filter((p): p is SpoolPosition => p !== null);
      this.sent = known.reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b));
    } finally {
      await admin.disconnect().catch(() => {});
    }
  }

  private async sendInTransaction(polls: SpooledPoll[], next: SpoolPosition): Promise<void> {
    const transaction = await bounded(this.producer!.transaction());
    const steps = (async () => {
      await transaction.send({
        topic: this.options.topic ?? POLLS_TOPIC,
        compression: kafkajs().CompressionTypes.None,
        messages: polls.map((p) => ({ key: p.key, value: p.value, headers: { mode: p.mode } })),
      });
      await transaction.sendOffsets({
        consumerGroupId: this.group(), topics: [{ topic: SPOOL_PROGRESS_TOPIC, partitions: [{ partition: 0, offset: packPosition(next) }] }],
      });
      await transaction.commit();
    })();
    try {
      await bounded(steps, TRANSACTION_TIMEOUT_MS);
    } catch (err) {
      // Whether it committed is not known here: the next connect() reads the position back.
      steps.catch(() => {});
      if (transaction.isActive()) await transaction.abort().catch(() => {});
      throw err;
    }
  }

  private committed(next: SpoolPosition): void {
    const { spool } = this.options;
    this.sent = next;
    spool.savePosition(next);
    spool.removeBefore(next);
    if (this.failingSince !== null) this.options.onRecovered?.(Date.now() - this.failingSince);
    this.failingSince = null;
    this.lastError = null;
    this.settleWaiters();
  }

  /** Resolves the flushes that what Kafka has now covers. */
  private settleWaiters(): void {
    const sent = this.sent;
    if (!sent) return;
    for (const w of this.waiters.filter((w) => comparePositions(sent, w.target) >= 0)) w.resolve();
    this.waiters = this.waiters.filter((w) => comparePositions(sent, w.target) < 0);
  }

  private failed(err: unknown): void {
    if (this.failingSince === null) {
      this.failingSince = Date.now();
      this.options.onError?.(err);
    }
    this.lastError = (err as Error).message ?? String(err);
  }

  private async finish(): Promise<void> {
    this.finished = true;
    await this.dropProducer();
    this.options.spool.close();
    rmSync(this.options.slot.dir, { recursive: true, force: true });
    await this.options.slot.release();
    for (const w of this.waiters.splice(0)) w.resolve();
  }

  private async dropProducer(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    await producer?.disconnect().catch(() => {});
  }

  private group(): string {
    return `trk-poll-spool-${this.options.slot.id}`;
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = () => { this.wakeUp = null; resolve(); };
      // A line appended between the read and here: go on at once.
      if (this.options.spool.bytesAfter(this.sent!) > 0 || this.closing) this.wakeUp();
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.wakeUp = null; resolve(); }, ms);
      // close() ends the wait; a new line does not (the broker is away: it would only fail again).
      this.wakeUp = () => { if (this.closing) { clearTimeout(timer); this.wakeUp = null; resolve(); } };
    });
  }
}

/** The position after the first `lines` of a chunk that starts at `from` (lines end in one newline). */
function advance(from: SpoolPosition, lines: string[]): SpoolPosition {
  return { segment: from.segment, byte: from.byte + lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) };
}

/**
 * kafkajs can wait a long time on a broker that is gone (connection and request timeouts, each
 * retried): a bounded wait keeps the drainer's state honest. What it leaves running is fenced.
 */
async function bounded<T>(work: Promise<T>, ms = 10 * SECOND_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`Kafka did not answer within ${ms} ms`)), ms); });
  work.catch(() => {});
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
