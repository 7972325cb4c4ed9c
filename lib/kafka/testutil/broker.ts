/** Helpers for tests against the real broker of the test services (test/services/kafka.ts). */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { testServiceUrl } from '../../../test/services/urls.ts';
import { createKafka } from '../client.ts';

/** The broker's address, as the run's globalSetup provided it. */
export const TEST_BROKERS = testServiceUrl('kafka');

export function testKafka(brokers = TEST_BROKERS): Kafka {
  return createKafka({ brokers, clientId: `test-${randomUUID().slice(0, 8)}`, log: () => {} });
}

/** Reads `topic` from the beginning with a fresh group until `done(messages)` or the deadline. */
export async function collect<T>(
  kafka: Kafka, topic: string, decode: (key: string, value: string, headers: Record<string, string>) => T | null,
  done: (items: T[]) => boolean, deadlineMs = 60_000,
): Promise<T[]> {
  const consumer = kafka.consumer({ groupId: `test-${randomUUID()}` });
  const items: T[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => { finish = resolve; });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
      const item = decode(message.key?.toString() ?? '', message.value?.toString() ?? '', headers);
      if (item !== null) items.push(item);
      if (done(items)) finish();
    },
  });
  const timer = setTimeout(finish, deadlineMs);
  await finished;
  clearTimeout(timer);
  await consumer.disconnect();
  return items;
}
