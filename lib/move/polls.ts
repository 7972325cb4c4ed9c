import type { Kafka } from 'kafkajs';
import { kafkajs } from '../kafka/kafkajs.ts';
import { POLLS_TOPIC, ensureTopics, pollKey } from '../kafka/topics.ts';
import { PollLog, type LoggedPoll } from '../store/poll-log.ts';

export interface PollsMoveOptions {
  kafka: Kafka;
  topic: string;
  dataDir: string;
  /** Lines of the log already on Kafka (a move that stopped part way): skipped. */
  alreadySent: number;
  /** Called after each batch is on Kafka with the lines sent so far, before the next batch. */
  onSent: (sent: number) => Promise<void>;
  batchSize?: number;
}

/**
 * Sends the embedded raw-poll log (DATA_DIR/polls.ndjson) to the raw-poll topic, oldest first, as
 * the KafkaBus would have published each poll (key `<carrier>:<AWB>`, the poll's JSON, header
 * `mode`), so a normalizer turns the history into ClickHouse's tables. Progress is reported after
 * every batch, so a move run again after a failure sends each line once. Damaged lines (a crash
 * mid-write) are skipped and counted, as the embedded start skips them.
 */
export async function sendPollLog(options: PollsMoveOptions): Promise<{ sent: number; skipped: number; damaged: number }> {
  const batchSize = options.batchSize ?? 1_000;
  const producer = options.kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: kafkajs().Partitioners.DefaultPartitioner });
  if (options.topic === POLLS_TOPIC) {
    // As the KafkaBus does; another topic (a normalizer started on its own) must exist already.
    const admin = options.kafka.admin();
    await admin.connect();
    try {
      await ensureTopics(admin);
    } finally {
      await admin.disconnect();
    }
  }
  await producer.connect();
  let line = 0;
  let damaged = 0;
  let batch: LoggedPoll[] = [];
  const send = async () => {
    await producer.send({
      topic: options.topic,
      compression: kafkajs().CompressionTypes.None,
      messages: batch.map(({ poll, mode }) => ({ key: pollKey(poll.carrier, poll.awb), value: JSON.stringify(poll), headers: { mode } })),
    });
    batch = [];
    await options.onSent(line);
  };
  try {
    for await (const logged of new PollLog(options.dataDir).read(() => { damaged++; })) {
      line++;
      if (line <= options.alreadySent) continue;
      batch.push(logged);
      if (batch.length >= batchSize) await send();
    }
    if (batch.length) await send();
  } finally {
    await producer.disconnect().catch(() => {});
  }
  return { sent: Math.max(0, line - options.alreadySent), skipped: Math.min(line, options.alreadySent), damaged };
}
