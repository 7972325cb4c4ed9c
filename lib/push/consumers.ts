import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { POLLS_TOPIC } from '../kafka/topics.ts';
import { normalizePoll, type RuleSet } from '../normalize/index.ts';
import { parsePollLine } from '../replay/index.ts';
import type { ChangeDetector } from './detector.ts';
import type { Dispatcher } from './dispatcher.ts';
import { WEBHOOK_EVENTS_TOPIC } from './event-log.ts';
import type { WebhookEvent } from './events.ts';

type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

interface ConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topic: string;
  /** Start a new group at the topic's end (tests); default the beginning, so nothing is missed. */
  fromLatest?: boolean;
  log?: Log;
  handle(value: string, headers: Record<string, string>): Promise<void>;
}

/** Keys of one fetched batch handled at once at most (each key's messages still one after another). */
const KEYS_AT_ONCE = 64;

/**
 * A consumer group whose offsets move only past messages handled: a partition's fetched batch is
 * handled, and its offsets committed, before the next (a crash re-delivers what was not finished;
 * the handlers are idempotent). Within a batch, messages of one key (one shipment) are handled one
 * after another in partition order, and different keys at once: handling is mostly waiting on the
 * state store and Kafka, and one message after the other made a busy partition's backlog grow
 * (the poll → delivery latency was seconds). A failing handler makes kafkajs retry the batch.
 */
class HandledConsumer {
  private readonly consumer: Consumer;
  private healthy = false;

  private readonly options: ConsumerOptions;
  constructor(options: ConsumerOptions) {
    this.options = options;
    this.consumer = options.kafka.consumer({ groupId: options.groupId, sessionTimeout: 30_000, heartbeatInterval: 3_000, maxWaitTimeInMs: 100 });
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => { this.healthy = true; });
    this.consumer.on(this.consumer.events.CRASH, (e) => {
      this.healthy = false;
      options.log?.('error', `${options.groupId}: consumer crashed (${String(e.payload.error)}); kafkajs restarts it`);
    });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.options.topic, fromBeginning: !this.options.fromLatest });
    await this.consumer.run({
      partitionsConsumedConcurrently: 6,
      eachBatch: async ({ batch, heartbeat }) => {
        const byKey = new Map<string, KafkaMessage[]>();
        for (const message of batch.messages) {
          const key = message.key?.toString() ?? '';
          const list = byKey.get(key);
          if (list) list.push(message);
          else byKey.set(key, [message]);
        }
        const groups = [...byKey.values()];
        let next = 0;
        const worker = async () => {
          // The whole batch, even while stopping: its offsets are resolved when this returns.
          while (next < groups.length) {
            for (const message of groups[next++]!) {
              const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
              await this.options.handle(message.value?.toString() ?? '', headers);
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(KEYS_AT_ONCE, groups.length) }, worker));
        await heartbeat();
      },
    });
  }

  isHealthy(): boolean {
    return this.healthy;
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}

/**
 * Push's change detection in the distributed pipeline: a consumer group of its own on the raw-poll
 * topic (beside the normalizer's ClickHouse writer, so neither waits on the other). Any number of
 * normalizer processes share it; a re-delivered poll makes no second event (detector.ts).
 */
export class PollChangeConsumer extends HandledConsumer {
  constructor(options: {
    kafka: Kafka; detector: ChangeDetector; rules: RuleSet; resolveCarrier: (name: string) => string | null;
    groupId?: string; topic?: string; fromLatest?: boolean; log?: Log;
  }) {
    super({
      kafka: options.kafka, groupId: options.groupId ?? 'tracking-push-detector', topic: options.topic ?? POLLS_TOPIC,
      fromLatest: options.fromLatest, log: options.log,
      async handle(value, headers) {
        const poll = parsePollLine(value, options.resolveCarrier);
        // Invalid polls are the normalizer's to report (its DLQ); they cannot be a change.
        if (typeof poll === 'string') return;
        await options.detector.handle(poll, headers.mode === 'test' ? 'test' : 'live', normalizePoll(poll, options.rules));
      },
    });
  }
}

/** The dispatcher's intake: events from Kafka into the durable per-endpoint queues. */
export class WebhookEventConsumer extends HandledConsumer {
  /** `notices`: customer notices' intake, after the dispatcher's queues (lib/buyer-notices). */
  constructor(options: {
    kafka: Kafka; dispatcher: Dispatcher; groupId?: string; topic?: string; fromLatest?: boolean; log?: Log;
    notices?: { enqueue(events: readonly WebhookEvent[]): Promise<void> };
  }) {
    super({
      kafka: options.kafka, groupId: options.groupId ?? 'tracking-dispatcher', topic: options.topic ?? WEBHOOK_EVENTS_TOPIC,
      fromLatest: options.fromLatest, log: options.log,
      async handle(value) {
        let event: WebhookEvent;
        try {
          event = JSON.parse(value) as WebhookEvent;
        } catch {
          options.log?.('warn', 'webhook events topic: a message that is not JSON was skipped');
          return;
        }
        if (event.schema !== 'webhook_event.v1') return;
        await options.dispatcher.enqueue([event]);
        await options.notices?.enqueue([event]);
      },
    });
  }
}
