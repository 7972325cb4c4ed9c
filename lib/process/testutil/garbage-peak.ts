/**
 * A child for release-memory.test.ts (run with --expose-gc): keeps ~45 MiB, makes a peak of ~250
 * MiB of garbage, then prints the resident memory after a plain `gc()` and after
 * releaseFreedMemory, as one JSON line.
 */
import { releaseFreedMemory } from '../release-memory.ts';

const kept: object[] = [];
for (let i = 0; i < 3e6; i++) {
  const o = { a: i, b: `x${i}`, c: [i, i] };
  if (i % 10 === 0) kept.push(o);
}
let garbage = 0;
for (let round = 0; round < 3; round++) {
  const junk: object[] = [];
  for (let i = 0; i < 2e6; i++) junk.push({ i, s: `y${i}` });
  garbage += junk.length;
}
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
(globalThis as { gc?: () => void }).gc!();
await settle();
const afterGc = process.memoryUsage.rss();
releaseFreedMemory();
await settle();
const afterRelease = process.memoryUsage.rss();
process.stdout.write(`${JSON.stringify({ kept: kept.length, garbage, afterGc, afterRelease })}\n`);
