import type { Kafka, Producer } from 'kafkajs';
import { kafkajs } from '../kafka/kafkajs.ts';
import type { WebhookEvent } from './events.ts';
import { shipmentKeyOf } from './events.ts';

/** Kafka topic of webhook events (contracts.md): events are here before any delivery attempt. */
export const WEBHOOK_EVENTS_TOPIC = 'tracking.webhook-events.v1';

/**
 * Where change detection and the API hand events to delivery. `publish` resolves once the events
 * are durable there (on Kafka, or in the embedded dispatcher's queues).
 */
export interface EventLog {
  publish(events: readonly WebhookEvent[]): Promise<void>;
  close(): Promise<void>;
}

/** Message key: one key's events of one shipment share a partition, so they stay in order. */
export function eventMessageKey(event: WebhookEvent): string {
  return `${event.key_prefix}:${shipmentKeyOf(event)}`;
}

export async function ensureWebhookTopic(kafka: Kafka, partitions = 6): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    if (!(await admin.listTopics()).includes(WEBHOOK_EVENTS_TOPIC)) {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic: WEBHOOK_EVENTS_TOPIC, numPartitions: partitions, replicationFactor: 1 }] });
    }
  } finally {
    await admin.disconnect();
  }
}

/** Messages in one produce request at most (a request stays well under the broker's size limit). */
const MAX_BATCH_MESSAGES = 500;

/**
 * The distributed event log: an idempotent producer, acknowledged by all in-sync replicas. Such a
 * producer has one request in flight at a time, so events published while one is out wait and go
 * together in the next (a group commit): with many detectors' calls at once, one acknowledgement
 * round trip is shared instead of each waiting for all those before it. Each call still resolves
 * only once its own events are acknowledged; calls keep their order.
 */
export class KafkaEventLog implements EventLog {
  private readonly producer: Producer;
  private connecting: Promise<void> | null = null;
  private readonly waiting: { events: readonly WebhookEvent[]; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private sending = false;

  private readonly topic: string;
  constructor(kafka: Kafka, topic: string = WEBHOOK_EVENTS_TOPIC) {
    this.topic = topic;
    this.producer = kafka.producer({
      idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: kafkajs().Partitioners.DefaultPartitioner,
    });
  }

  async publish(events: readonly WebhookEvent[]): Promise<void> {
    if (events.length === 0) return;
    this.connecting ??= this.producer.connect().catch((err: unknown) => { this.connecting = null; throw err; });
    await this.connecting;
    await new Promise<void>((resolve, reject) => {
      this.waiting.push({ events, resolve, reject });
      void this.sendWaiting();
    });
  }

  private async sendWaiting(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.waiting.length > 0) {
        let count = 0;
        let take = 0;
        while (take < this.waiting.length && (take === 0 || count + this.waiting[take]!.events.length <= MAX_BATCH_MESSAGES)) {
          count += this.waiting[take++]!.events.length;
        }
        const batch = this.waiting.splice(0, take);
        try {
          await this.producer.send({
            topic: this.topic,
            acks: -1,
            compression: kafkajs().CompressionTypes.None,
            messages: batch.flatMap((call) => call.events.map((event) => ({ key: eventMessageKey(event), value: JSON.stringify(event) }))),
          });
          for (const call of batch) call.resolve();
        } catch (err) {
          for (const call of batch) call.reject(err);
        }
      }
    } finally {
      this.sending = false;
    }
  }

  async close(): Promise<void> {
    if (this.connecting) await this.connecting.then(() => this.producer.disconnect(), () => {});
  }
}

/** The embedded default's event log: straight into the in-process dispatcher's durable queues. */
export class InProcessEventLog implements EventLog {
  private readonly enqueue: (events: readonly WebhookEvent[]) => Promise<void>;
  constructor(enqueue: (events: readonly WebhookEvent[]) => Promise<void>) {
    this.enqueue = enqueue;
  }

  publish(events: readonly WebhookEvent[]): Promise<void> {
    return this.enqueue(events);
  }

  async close(): Promise<void> {}
}
