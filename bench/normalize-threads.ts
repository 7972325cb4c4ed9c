/**
 * What moving the normalizer's CPU work off the event loop could reach on this machine: the same
 * polls decoded, normalized and encoded (bench/normalize-thread.ts) on N worker threads fed batches
 * from the main thread, with no Kafka and no ClickHouse. Informative: it bounds a worker-thread
 * normalizer from above, before ClickHouse and Kafka take their share of the cores.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

const BATCH = 250;

/** Polls per second on `threads` workers (after one warm-up pass, JIT and config loading left out). */
export async function normalizeOnThreads(values: readonly string[], threads: number): Promise<number> {
  const workers = Array.from({ length: threads }, () => new Worker(new URL('./normalize-thread.ts', import.meta.url)));
  try {
    await pass(workers, values);
    const started = performance.now();
    await pass(workers, values);
    return values.length / ((performance.now() - started) / 1000);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Every value once, BATCH at a time, each worker taking the next batch when it answers. */
async function pass(workers: readonly Worker[], values: readonly string[]): Promise<void> {
  let next = 0;
  await Promise.all(workers.map((worker) => new Promise<void>((resolve, reject) => {
    const send = () => {
      if (next >= values.length) {
        worker.off('message', send);
        worker.off('error', reject);
        resolve();
        return;
      }
      worker.postMessage(values.slice(next, next + BATCH));
      next += BATCH;
    };
    worker.on('message', send);
    worker.on('error', reject);
    send();
  })));
}

export const CORES = availableParallelism();
