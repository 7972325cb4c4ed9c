/** Where replayed polls come from: one async stream of polls (or bad lines) per source. */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { PassThrough, type Readable } from 'node:stream';
import type { Kafka } from 'kafkajs';
import type { ClickHouseClient } from '../clickhouse/client.ts';
import { streamPollsByTime } from '../clickhouse/poll-reader.ts';
import type { PollWindow } from '../clickhouse/events.ts';
import { readPollWindow } from '../kafka/read-window.ts';
import { readEmbeddedLog } from './embedded.ts';
import { parseReplayLine, type ModePoll } from './logged-line.ts';

export type SourceItem = ({ kind: 'poll' } & ModePoll) | { kind: 'invalid'; line: number; message: string };

type Resolve = (name: string) => string | null;

/** NDJSON lines (a file, standard input, a Kafka window): bare polls or embedded-log lines. */
export async function* lineSource(input: Readable, resolveCarrier: Resolve): AsyncGenerator<SourceItem> {
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (!text.trim()) continue;
    const parsed = parseReplayLine(text, resolveCarrier);
    yield typeof parsed === 'string' ? { kind: 'invalid', line, message: parsed } : { kind: 'poll', ...parsed };
  }
}

/** The embedded default's raw-poll log under `dataDir`. */
export async function* embeddedSource(dataDir: string, resolveCarrier: Resolve): AsyncGenerator<SourceItem> {
  const invalid: SourceItem[] = [];
  for await (const polled of readEmbeddedLog(dataDir, resolveCarrier, (line, message) => invalid.push({ kind: 'invalid', line, message }))) {
    while (invalid.length) yield invalid.shift()!;
    yield { kind: 'poll', ...polled };
  }
  yield* invalid;
}

/**
 * A window of the Kafka topic (message time), streamed: the read waits while the consumer of this
 * stream is behind. Messages carry no mode in their value (it is a header): they replay as `live`.
 */
export function kafkaSource(kafka: Kafka, window: { sinceMs: number; untilMs?: number }, resolveCarrier: Resolve, topic?: string): AsyncGenerator<SourceItem> {
  const stream = new PassThrough();
  readPollWindow(kafka, window, async (value) => {
    if (!stream.write(value.replace(/\n/g, ' ') + '\n')) await once(stream, 'drain');
  }, topic).then(() => stream.end(), (err: unknown) => stream.destroy(err as Error));
  return lineSource(stream, resolveCarrier);
}

/** carrier_polls in polled_at order (poll-reader.ts). */
export async function* clickHouseSource(client: ClickHouseClient, window: PollWindow): AsyncGenerator<SourceItem> {
  for await (const stored of streamPollsByTime(client, window)) yield { kind: 'poll', poll: stored.poll, mode: stored.mode };
}

export interface PollFilter {
  sinceMs: number | null;
  untilMs: number | null;
  /** Canonical slugs; null for all. */
  carriers: ReadonlySet<string> | null;
}

/** Whether a poll of a file or the embedded log is in the window (Kafka and ClickHouse select by query). */
export function inWindow(item: ModePoll, filter: PollFilter): boolean {
  if (filter.carriers && !filter.carriers.has(item.poll.carrier)) return false;
  if (filter.sinceMs === null && filter.untilMs === null) return true;
  const at = Date.parse(item.poll.polled_at);
  return (filter.sinceMs === null || at >= filter.sinceMs) && (filter.untilMs === null || at < filter.untilMs);
}
