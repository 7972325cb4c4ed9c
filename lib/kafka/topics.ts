import type { Admin } from 'kafkajs';

/** The raw-poll log (contracts.md): one message per carrier poll, key `<carrier>:<AWB>`. */
export const POLLS_TOPIC = 'tracking.carrier-polls.v1';
/** Polls the normalizer could not process, with the reason. */
export const DLQ_TOPIC = 'tracking.carrier-polls.dlq.v1';
/**
 * Where each spool slot's drain position is committed, as a consumer group's offset, in the same
 * Kafka transaction as the polls it covers (lib/kafka/spool-drainer.ts). It holds no messages.
 */
export const SPOOL_PROGRESS_TOPIC = 'tracking.poll-spool-progress.v1';
/** Several partitions so normalizers scale out; one AWB always lands on one partition (its key). */
export const DEFAULT_PARTITIONS = 6;

/** Creates the topics if missing (idempotent). */
export async function ensureTopics(admin: Admin, partitions = DEFAULT_PARTITIONS): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = [POLLS_TOPIC, DLQ_TOPIC, SPOOL_PROGRESS_TOPIC].filter((t) => !existing.has(t));
  if (missing.length === 0) return;
  await admin.createTopics({
    waitForLeaders: true,
    topics: missing.map((topic) => ({ topic, numPartitions: topic === SPOOL_PROGRESS_TOPIC ? 1 : partitions, replicationFactor: 1 })),
  });
}

/** Message key: all polls of one shipment go to one partition, so they stay in order. */
export function pollKey(carrier: string, awb: string): string {
  return `${carrier}:${awb}`;
}
