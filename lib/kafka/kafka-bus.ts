import { join } from 'node:path';
import { CompressionTypes, Partitioners, type Kafka, type Producer } from 'kafkajs';
import type { PollBus } from '../bus/index.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { Spool } from './spool.ts';
import { POLLS_TOPIC, ensureTopics, pollKey } from './topics.ts';
import type { KeyMode } from '../schemas/index.ts';

/** One message as queued and spooled: the poll's key, its JSON and the key mode it was made for. */
interface QueuedMessage {
  key: string;
  value: string;
  mode: KeyMode;
}

export interface KafkaBusOptions {
  kafka: Kafka;
  /** DATA_DIR: polls that cannot be published yet are spooled under `<dataDir>/spool/`. */
  dataDir: string;
  onError?: (err: unknown) => void;
  /** Messages per send (default 500). */
  batchSize?: number;
  /** Wait between attempts while the broker is away (default 1 s). */
  retryDelayMs?: number;
  /** The raw-poll topic (default tracking.carrier-polls.v1); another one must already exist. */
  topic?: string;
}

const SEND_TIMEOUT_MS = 5_000;

/**
 * The raw-poll log on Kafka. `publish` never blocks a lookup: messages are queued and sent in
 * order by one pump with an idempotent producer. While Kafka is unreachable they are spooled to
 * disk (in order) and published from there first once it is back, so no poll is lost.
 */
export class KafkaBus implements PollBus {
  private readonly producer: Producer;
  private readonly spool: Spool;
  private queue: QueuedMessage[] = [];
  private spooling: boolean;
  private pumping: Promise<void> | null = null;
  private connected = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Set by a failed pump: wait this long, then pump again (scheduled once the pump has ended). */
  private retryAfterMs: number | null = null;
  /** Bytes at the start of the spool file already on Kafka: a retried drain does not send them twice. */
  private spoolSent = 0;

  private readonly options: KafkaBusOptions;
  constructor(options: KafkaBusOptions) {
    this.options = options;
    this.producer = options.kafka.producer({
      idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner,
    });
    this.spool = new Spool(join(options.dataDir, 'spool', 'carrier-polls.ndjson'));
    this.spooling = this.spool.pending; // polls left from a previous run go first
    if (this.spooling) this.schedule(0);
  }

  publish(poll: CarrierPoll, mode: KeyMode): void {
    const message = { key: pollKey(poll.carrier, poll.awb), value: JSON.stringify(poll), mode };
    if (this.spooling) {
      this.spool.append([JSON.stringify(message)]);
      return;
    }
    this.queue.push(message);
    this.schedule(0);
  }

  /** Resolves when every poll published so far is on Kafka (not merely spooled). */
  async flush(): Promise<void> {
    while (!this.closed && (this.queue.length || this.spooling || this.pumping)) {
      if (this.pumping) await this.pumping;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  get spooled(): boolean {
    return this.spooling;
  }

  async close(): Promise<void> {
    // Whatever is still in memory goes to the spool so the next start publishes it.
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.pumping;
    // The pump that just ended may have scheduled a retry.
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.closed = true;
    this.spool.append(this.queue.map((m) => JSON.stringify(m)));
    this.queue = [];
    if (this.connected) await this.producer.disconnect().catch(() => {});
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.pumping || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.pumping = this.pump().finally(() => {
        this.pumping = null;
        // The retry is scheduled here, not in pump's catch: schedule() does nothing while a pump
        // runs, so a retry asked for from inside the pump was dropped and the bus stayed spooling
        // for good once the broker had been away.
        const retryAfterMs = this.retryAfterMs;
        this.retryAfterMs = null;
        if (retryAfterMs !== null) this.schedule(retryAfterMs);
        else if (this.queue.length) this.schedule(0);
      });
    }, delayMs);
  }

  private async send(messages: QueuedMessage[]): Promise<void> {
    if (!this.connected) {
      await this.producer.connect();
      const admin = this.options.kafka.admin();
      await admin.connect();
      try {
        await ensureTopics(admin);
      } finally {
        await admin.disconnect().catch(() => {});
      }
      this.connected = true;
    }
    const sending = this.producer.send({
      topic: this.options.topic ?? POLLS_TOPIC,
      compression: CompressionTypes.None,
      messages: messages.map((m) => ({ key: m.key, value: m.value, headers: { mode: m.mode } })),
    });
    // kafkajs can wait a long time for a dead broker; a bounded wait keeps the spool responsive.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('Kafka send timed out')), SEND_TIMEOUT_MS); });
    try {
      await Promise.race([sending, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async pump(): Promise<void> {
    const batchSize = this.options.batchSize ?? 500;
    try {
      if (this.spooling) await this.drainSpool(batchSize);
      while (this.queue.length) {
        const batch = this.queue.slice(0, batchSize);
        await this.send(batch);
        this.queue.splice(0, batch.length);
      }
    } catch (err) {
      this.options.onError?.(err);
      this.connected = false;
      await this.producer.disconnect().catch(() => {});
      // Keep order: everything not yet sent moves to the spool, and new polls follow it there.
      this.spool.append(this.queue.map((m) => JSON.stringify(m)));
      this.queue = [];
      this.spooling = true;
      this.retryAfterMs = this.options.retryDelayMs ?? 1_000;
    }
  }

  private async drainSpool(batchSize: number): Promise<void> {
    for (;;) {
      const { lines } = this.spool.readFrom(this.spoolSent);
      for (let i = 0; i < lines.length; i += batchSize) {
        const batch = lines.slice(i, i + batchSize);
        await this.send(batch.map((l) => JSON.parse(l) as QueuedMessage));
        // Lines are whole, newline-terminated; advance past exactly what was sent.
        this.spoolSent += batch.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
      }
      // Synchronous check-and-remove: no publish can slip in between (single thread).
      if (lines.length === 0 && this.spool.removeIfDrained(this.spoolSent)) {
        this.spoolSent = 0;
        this.spooling = false;
        return;
      }
    }
  }
}
