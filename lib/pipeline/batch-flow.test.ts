/**
 * The normalizer's batch handling without a broker (as PostHog tests handleKafkaBatch): a sink whose
 * flushes the test resolves or rejects by hand, and ports that record commits. What it pins: commits
 * per partition in order, none before the flush holding the batch's rows, backpressure, a rebalance
 * waiting for queued rows before kafkajs re-joins, a stop during a failing flush committing nothing,
 * and a stop bounded by its flush budget.
 */
import { describe, expect, it } from 'vitest';
import type { PollRows } from '../clickhouse/rows.ts';
import { makePoll, scan } from '../testutil/polls.ts';
import { product } from '../testutil/product.ts';
import { BatchFlow, type FetchedBatch } from './normalizer.ts';

interface Deferred { resolve: () => void; reject: (err: Error) => void }

/** A RowSink whose every flush() waits for the test. */
class HandSink {
  written: PollRows[] = [];
  flushes: Deferred[] = [];
  write(rows: PollRows | readonly PollRows[]): void {
    this.written.push(...(Array.isArray(rows) ? rows : [rows as PollRows]));
  }
  flush(): Promise<void> {
    return new Promise<void>((resolve, reject) => this.flushes.push({ resolve, reject }));
  }
}

/** Lets every callback that can run, run: chained commits, and a retry after its 0 ms delay. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setTimeout(resolve, 0));
}

let offset = 0;
function batchOf(partition: number, count: number): FetchedBatch & { resolved: string[]; heartbeats: number } {
  const messages = Array.from({ length: count }, () => {
    const poll = makePoll({ scans: [scan({ occurred_at: '2026-11-18T10:00:00', raw_status: 'Manifested', raw_code: 'UD' })] });
    return { key: null, value: Buffer.from(JSON.stringify(poll)), offset: String(offset++), headers: {} };
  });
  const batch = {
    topic: 'polls', partition, messages, resolved: [] as string[], heartbeats: 0,
    resolveOffset: (o: string) => { batch.resolved.push(o); },
    heartbeat: async () => { batch.heartbeats++; },
  };
  return batch;
}

function flowWith(sink: HandSink, maxPendingMessages = 1_000) {
  const commits: string[] = [];
  const flow = new BatchFlow({
    sink, rules: product.rules, resolveCarrier: (name) => product.registry.resolve(name), maxPendingMessages,
    retryDelayMs: () => 0,
    ports: {
      commit: async (topic, partition, next) => { commits.push(`${topic}:${partition}@${next}`); },
      sendDeadLetters: async () => { throw new Error('no dead letters expected'); },
    },
  });
  return { flow, commits };
}

describe('BatchFlow (no broker)', () => {
  it('commits nothing before the flush holding the rows, then per partition in order', async () => {
    const sink = new HandSink();
    const { flow, commits } = flowWith(sink);
    const a1 = batchOf(0, 2);
    const b1 = batchOf(1, 1);
    const a2 = batchOf(0, 1);
    for (const b of [a1, b1, a2]) await flow.eachBatch(b);
    expect(sink.written).toHaveLength(4);
    expect(sink.flushes).toHaveLength(3);
    // eachBatch returned at once and moved the fetch position, but committed nothing.
    expect([a1.resolved, b1.resolved, a2.resolved]).toEqual([[a1.messages[1]!.offset], [b1.messages[0]!.offset], [a2.messages[0]!.offset]]);
    await settle();
    expect(commits).toEqual([]);

    // The later batch of partition 0 is durable first: it waits for the earlier one.
    sink.flushes[2]!.resolve();
    sink.flushes[1]!.resolve();
    await settle();
    expect(commits).toEqual([`polls:1@${Number(b1.messages[0]!.offset) + 1}`]);
    sink.flushes[0]!.resolve();
    await settle();
    expect(commits).toEqual([
      `polls:1@${Number(b1.messages[0]!.offset) + 1}`,
      `polls:0@${Number(a1.messages[1]!.offset) + 1}`,
      `polls:0@${Number(a2.messages[0]!.offset) + 1}`,
    ]);
  });

  it('a failed flush holds the batch (and its partition) until a later flush resolves', async () => {
    const sink = new HandSink();
    const { flow, commits } = flowWith(sink);
    const a1 = batchOf(0, 1);
    await flow.eachBatch(a1);
    sink.flushes[0]!.reject(new Error('ClickHouse away'));
    await settle();
    expect(flow.lastBatchError?.message).toBe('ClickHouse away');
    expect(commits).toEqual([]);
    // The retry asks the sink again (the writer kept the rows queued).
    expect(sink.flushes).toHaveLength(2);
    sink.flushes[1]!.resolve();
    await settle();
    expect(commits).toEqual([`polls:0@${Number(a1.messages[0]!.offset) + 1}`]);
    expect(flow.lastBatchError).toBeNull();
  });

  it('past maxPendingMessages, eachBatch returns only once its batch is durable (backpressure)', async () => {
    const sink = new HandSink();
    const { flow, commits } = flowWith(sink, 2);
    await flow.eachBatch(batchOf(0, 2)); // at the limit: returns at once
    let returned = false;
    const over = flow.eachBatch(batchOf(0, 1)).then(() => { returned = true; });
    await settle();
    expect(returned).toBe(false);
    sink.flushes[1]!.resolve();
    await settle();
    // Its own flush is done, but its commit waits for the partition's earlier batch.
    expect(returned).toBe(false);
    sink.flushes[0]!.resolve();
    await over;
    expect(commits).toHaveLength(2);
  });

  it('a rebalance noticed at the heartbeat holds the batch until every queued batch is durable, then rethrows (kafkajs re-joins only then)', async () => {
    const sink = new HandSink();
    const { flow, commits } = flowWith(sink);
    await flow.eachBatch(batchOf(1, 1)); // another partition's rows, still being inserted
    const rebalancing = Object.assign(new Error('The group is rebalancing'), { type: 'REBALANCE_IN_PROGRESS' });
    const batch = { ...batchOf(0, 1), heartbeat: async () => { throw rebalancing; } };
    let outcome: unknown = 'pending';
    const handled = flow.eachBatch(batch).then(() => 'returned', (err: unknown) => err);
    void handled.then((result) => { outcome = result; });
    await settle();
    expect(outcome).toBe('pending');
    sink.flushes[1]!.resolve();
    await settle();
    // Its own rows are durable, the other partition's are not: still waiting.
    expect(outcome).toBe('pending');
    sink.flushes[0]!.resolve();
    expect(await handled).toBe(rebalancing);
    expect(commits).toHaveLength(2);
  });

  it('any other heartbeat failure is rethrown at once', async () => {
    const sink = new HandSink();
    const { flow } = flowWith(sink);
    const broken = new Error('connection closed');
    await expect(flow.eachBatch({ ...batchOf(0, 1), heartbeat: async () => { throw broken; } })).rejects.toBe(broken);
    expect(sink.flushes).toHaveLength(1);
  });

  it('a stop during a failing flush commits nothing and ends', async () => {
    const sink = new HandSink();
    const { flow, commits } = flowWith(sink);
    await flow.eachBatch(batchOf(0, 1));
    const stopping = flow.stop();
    // stop() asks for one more flush; ClickHouse is still away.
    expect(sink.flushes).toHaveLength(2);
    sink.flushes[1]!.reject(new Error('still away'));
    sink.flushes[0]!.reject(new Error('ClickHouse away'));
    await stopping;
    expect(commits).toEqual([]);
    // A batch fetched after the stop is not taken.
    await flow.eachBatch(batchOf(0, 1));
    expect(sink.written).toHaveLength(1);
  });

  it('a stop waits for the last flush at most its budget: a batch still being written then stays uncommitted', async () => {
    const sink = new HandSink();
    const { flow, commits } = flowWith(sink);
    await flow.eachBatch(batchOf(0, 2));
    await flow.eachBatch(batchOf(1, 1));
    // Partition 1's rows are stored; partition 0's insert goes on (a slow ClickHouse).
    sink.flushes[1]!.resolve();
    await settle();
    expect(commits).toHaveLength(1);
    const started = Date.now();
    await flow.stop(() => {}, 50);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The insert finishing after the stop commits nothing: Kafka hands those polls to the next member.
    sink.flushes[0]!.resolve();
    for (const flush of sink.flushes.slice(2)) flush.resolve();
    await settle();
    expect(commits).toEqual([expect.stringMatching(/^polls:1@/)]);
  });
});
