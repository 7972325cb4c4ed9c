import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { POLLS_TOPIC } from './topics.ts';

export interface KafkaWindow {
  /** Inclusive start, epoch ms of the message timestamp (the poll's publish time). */
  sinceMs: number;
  /** Exclusive end; default: up to the end of the log as it was when the read started. */
  untilMs?: number;
}

/**
 * Reads the raw-poll log for a time window, partition by partition from the first offset at
 * `sinceMs` up to the end offsets seen at start (so a live topic does not keep the read open).
 * `onMessage` is awaited per message: a slow consumer slows the read instead of buffering.
 */
export async function readPollWindow(
  kafka: Kafka, window: KafkaWindow, onMessage: (value: string) => Promise<void> | void, topic = POLLS_TOPIC,
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  const starts = await admin.fetchTopicOffsetsByTimestamp(topic, window.sinceMs);
  await admin.disconnect();

  const endOf = new Map(ends.map((e) => [e.partition, BigInt(e.high)]));
  const pending = new Set<number>();
  const startOf = new Map<number, string>();
  for (const { partition, offset } of starts) {
    const end = endOf.get(partition) ?? 0n;
    // offset -1: no message at or after sinceMs in this partition.
    if (offset !== '-1' && BigInt(offset) < end) {
      pending.add(partition);
      startOf.set(partition, offset);
    }
  }
  if (pending.size === 0) return 0;

  const consumer = kafka.consumer({ groupId: `replay-${randomUUID()}` });
  let read = 0;
  let finish!: () => void;
  let fail!: (err: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => { finish = resolve; fail = reject; });
  // Where each partition's read goes on: its start, then past the last message handled.
  const nextOf = new Map(startOf);
  // Seek on every join, not once after run(): when the first join fails (a broker just restarted,
  // its group coordinator still loading), kafkajs' run() resolves while the consumer restarts, and a
  // seek then throws "Consumer group was not initialized"; a re-join resumes where the read was.
  consumer.on(consumer.events.GROUP_JOIN, () => {
    for (const [partition, offset] of nextOf) if (pending.has(partition)) consumer.seek({ topic, partition, offset });
  });
  // The end is judged per batch, on its last offset, which counts the transactions' commit markers
  // (control records, never handed over as messages) too: the raw-poll log is written in
  // transactions, so a partition usually ends in a marker, and a batch of nothing but a marker
  // reaches no message handler — but its END_BATCH_PROCESS event, like every batch's.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const { partition } = payload;
    if (payload.topic !== topic || !pending.has(partition)) return;
    const last = BigInt(payload.lastOffset);
    nextOf.set(partition, (last + 1n).toString());
    if (last + 1n >= (endOf.get(partition) ?? 0n)) {
      pending.delete(partition);
      if (pending.size === 0) finish();
    }
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      if (!pending.has(partition)) return;
      const timestamp = Number(message.timestamp);
      const inWindow = timestamp >= window.sinceMs && (window.untilMs === undefined || timestamp < window.untilMs);
      if (inWindow && message.value) {
        try {
          await onMessage(message.value.toString('utf8'));
          read++;
        } catch (err) {
          fail(err);
          return;
        }
      }
      nextOf.set(partition, (BigInt(message.offset) + 1n).toString());
    },
  });
  try {
    await finished;
  } finally {
    await consumer.disconnect();
  }
  return read;
}
