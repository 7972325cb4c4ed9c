/**
 * A process killed mid-stream, for the journal's crash test (journal.test.ts): opens the journal in
 * the directory argv[2], then appends entries `{ n, pad }` (n = 0, 1, 2…; every other one durable,
 * `pad` large so that a kill can land inside a write) as fast as it can, printing `ack <n>` once
 * each append has returned. The test kills it with SIGKILL; it never closes anything.
 */
import { Journal } from '../journal.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: crash-child.ts DIR');
const { journal } = Journal.open<{ n: number; pad: string }>(dir);
journal.compact(() => ({}));
const pad = 'x'.repeat(256 * 1024);
for (let n = 0; ; n++) {
  journal.append([{ n, pad }], n % 2 === 0);
  // Synchronous on a pipe (Linux): once the test reads it, the append had returned.
  process.stdout.write(`ack ${n}\n`);
}
