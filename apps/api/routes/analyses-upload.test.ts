/**
 * CSV uploads of the analyzer over real HTTP (issue 29, findings 3 and 4), on the embedded default
 * (no state of these cases lives in a store): the API listening on a loopback port, uploads written
 * on raw sockets (node:net) so a test sees exactly when the server answers and closes.
 */
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema } from '../../../lib/schemas/index.ts';
import { ANALYSIS_BODY_LIMIT } from './analyses.ts';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';
import { requestHead, upload, type Upload } from '../testutil/upload.ts';

function errorCode(res: Upload): string {
  const parsed = ErrorBodySchema.safeParse(JSON.parse(res.body));
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  return parsed.data!.error.code;
}

describe('analyzer CSV uploads over real HTTP', () => {
  let h: ApiHarness;
  let base: string;
  let key: string;

  beforeAll(async () => {
    h = await startApiHarness();
    base = await h.listen();
    key = (await h.createKey({ plan: 'business', burst_per_second: 100_000 })).key;
  });
  afterAll(() => h.close());

  it('a 413 in the middle of a large CSV closes the kept-alive connection (Connection: close, the socket ended)', { timeout: 60_000 }, async () => {
    // Past 16 MiB in 17,000 rows of 1 KiB (under the 20,000-row cap), and past 20,000 rows in 1 MiB.
    const wideRow = Buffer.from(`1234567890104,delhivery,${'n'.repeat(1_024 - 25)}\n`);
    const narrowRow = Buffer.from('1234567890104,delhivery,\n');
    for (const [header, row, rows] of [['awb,carrier,note\n', wideRow, 17_000], ['awb,carrier,note\n', narrowRow, 40_000]] as const) {
      const length = header.length + row.length * rows;
      if (row === wideRow) expect(length).toBeGreaterThan(ANALYSIS_BODY_LIMIT);
      const pattern = Buffer.concat(Array.from({ length: 64 }, () => row));
      const socket = await upload(base, requestHead(key, length) + header, pattern, row.length * rows, 5_000);
      expect(socket.status, socket.body).toBe(413);
      expect(errorCode(socket)).toBe('payload_too_large');
      expect(socket.headers.connection).toBe('close');
      // Ended by the server right after the answer, not left to a 30 s request timeout.
      expect(socket.closedAfterMs, 'the connection was still open 5 s after the 413').not.toBeNull();
      expect(socket.closedAfterMs! - socket.answeredAfterMs!).toBeLessThan(5_000);
    }
    expect((await h.usage(key)).analyzer!.shipments_used).toBe(0);
  });

  // How much such uploads add to other requests' latency is a figure, not a test: `npm run bench --
  // analyzer` measures /healthz's p99 with and without them (bench/upload-headers.ts).
  it('four ~10 MB single-line CSV headers sent over and over: each refused at its header (400), never read to the end, while /healthz keeps answering', { timeout: 120_000 }, async () => {
    // The issue's file: `awb` then `,x` five million times, one line.
    const hostileBytes = 3 + 2 * 5_000_000;
    // The uploads come from a worker thread: their writing of megabytes is not on the server's event loop.
    const worker = new Worker(new URL('../testutil/upload-worker.ts', import.meta.url), {
      workerData: { base, head: `${requestHead(key, hostileBytes)}awb`, bodyBytes: hostileBytes - 3, parallel: 4 },
    });
    const uploadsDone = new Promise<Upload[]>((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
    let healthAnswers = 0;
    let uploads: Upload[];
    try {
      worker.postMessage('start');
      // /healthz in turn until at least eight uploads have been refused (the worker starts each
      // again as soon as the last ended): the server answers others while it refuses them.
      for (let round = 0; round < 400 && healthAnswers < 40; round++) {
        const res = await fetch(`${base}/healthz`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        healthAnswers++;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      worker.postMessage('stop');
      uploads = await uploadsDone;
      await worker.terminate();
    }
    expect(healthAnswers).toBe(40);
    expect(uploads.length).toBeGreaterThanOrEqual(4);
    const answered = uploads.filter((u) => u.status !== null);
    expect(answered.length).toBeGreaterThan(0);
    for (const u of answered) {
      expect(u.status, u.body).toBe(400);
      expect(errorCode(u)).toBe('invalid_analysis');
      expect(JSON.parse(u.body).error.message).toMatch(/header row is longer than 64 KiB/);
    }
    // Every connection was ended by the server after its answer (the worker waits 2 s for that).
    expect(uploads.every((u) => u.closedAfterMs !== null)).toBe(true);
  });
});
