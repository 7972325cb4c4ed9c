/**
 * Test support (analyses-upload.test.ts): `parallel` hostile CSV uploads at once, each started again
 * as soon as the last one ended, from 'start' until 'pause' or 'stop'; 'stop' posts every upload's outcome. A
 * worker thread, so the megabytes it writes cost the server's event loop nothing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { upload, type Upload } from './upload.ts';

const { base, head, bodyBytes, parallel } = workerData as { base: string; head: string; bodyBytes: number; parallel: number };
// The file: `awb` (in `head`) then `,x` repeated.
// 64 KiB a millisecond at most: a fast client, sending for as long as the server reads.
const pattern = Buffer.from(',x'.repeat(32 * 1024));
const uploads: Upload[] = [];
let running = false;
let loops: Promise<void>[] = [];

parentPort!.on('message', (message: 'start' | 'pause' | 'stop') => {
  if (message === 'start') {
    running = true;
    loops = Array.from({ length: parallel }, async () => {
      while (running) uploads.push(await upload(base, head, pattern, bodyBytes, 2_000, 1));
    });
  } else {
    // 'pause' lets the uploads under way end; 'stop' also posts every outcome.
    running = false;
    if (message === 'stop') void Promise.all(loops).then(() => parentPort!.postMessage(uploads));
  }
});
