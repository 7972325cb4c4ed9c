/**
 * npm run bench -- analyzer, hostile CSV headers (issue 29, finding 4; measured here since issue 44,
 * not in a test: a shared machine's spikes made the timed test fail without a fault): four ~10 MB
 * single-line CSV headers (`awb` then `,x` five million times) uploaded over and over from a worker
 * thread, while /healthz is called in turn on the same server; /healthz p99 with the uploads against
 * without them, interleaved in 8 phases of 750 ms each so the machine's own load falls on both alike.
 * Before the fix, one such upload held the event loop for seconds.
 */
import { Worker } from 'node:worker_threads';
import { startApiHarness } from '../apps/api/testutil/harness.ts';
import { requestHead } from '../apps/api/testutil/upload.ts';
import type { BenchResult } from './report.ts';

export const TARGET_ADDED_P99_MS = 50;
const PHASES = 8;
const PHASE_MS = 750;

const p99Of = (samples: readonly number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(samples.length * 0.99) - 1]!;

/** Sequential /healthz calls for `ms`, each one's time in ms into `into`. */
async function healthCalls(base: string, into: number[], ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const t0 = performance.now();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
    into.push(performance.now() - t0);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export async function benchUploadHeaders(): Promise<BenchResult[]> {
  const h = await startApiHarness();
  const base = await h.listen();
  const { key } = await h.createKey({ plan: 'business', burst_per_second: 100_000 });
  const hostileBytes = 3 + 2 * 5_000_000;
  const worker = new Worker(new URL('../apps/api/testutil/upload-worker.ts', import.meta.url), {
    workerData: { base, head: `${requestHead(key, hostileBytes)}awb`, bodyBytes: hostileBytes - 3, parallel: 4 },
  });
  const uploadsDone = new Promise<{ status: number | null }[]>((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
  const quiet: number[] = [];
  const loaded: number[] = [];
  try {
    for (let phase = 0; phase < PHASES; phase++) {
      await healthCalls(base, quiet, PHASE_MS);
      worker.postMessage('start');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await healthCalls(base, loaded, PHASE_MS);
      worker.postMessage('pause');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    worker.postMessage('stop');
  }
  const uploads = await uploadsDone;
  await worker.terminate();
  await h.close();
  const added = p99Of(loaded) - p99Of(quiet);
  const refused = uploads.filter((u) => u.status === 400).length;
  const round = (x: number) => Math.round(x * 10) / 10;
  return [
    { name: `/healthz p99 without uploads (${quiet.length} calls)`, value: round(p99Of(quiet)), unit: 'ms', target: null, pass: null },
    { name: `/healthz p99 under four ~10 MB one-line CSV headers (${loaded.length} calls; ${refused} of ${uploads.length} uploads refused 400)`, value: round(p99Of(loaded)), unit: 'ms', target: null, pass: null },
    { name: '  added by the uploads', value: round(added), unit: 'ms', target: `< ${TARGET_ADDED_P99_MS}`, pass: added < TARGET_ADDED_P99_MS },
  ];
}
