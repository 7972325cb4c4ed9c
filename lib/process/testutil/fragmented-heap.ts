/**
 * A child for release-memory.test.ts (run with --expose-gc): fills the old generation with
 * record-sized strings, as the in-process cache does, and lets every other one die, scattered over
 * every page (what an LRU's evictions leave). Prints, as one JSON line, the old space's
 * committed and used bytes after a plain `gc()` and after releaseFreedMemory, and the release's
 * pause.
 */
import { performance } from 'node:perf_hooks';
import { oldSpaceNow, releaseFreedMemory } from '../release-memory.ts';

const oldSpace = () => {
  const { committedBytes, usedBytes } = oldSpaceNow();
  return { committed: committedBytes, used: usedBytes };
};
const gc = (globalThis as { gc?: () => void }).gc!;

const RECORD = 'r'.repeat(3_600);
let held: string[] = [];
for (let i = 0; i < 70_000; i++) held.push(`${i}:${RECORD}`.slice(0, 3_600));
// Survivors of two young-generation collections sit in the old generation, packed page by page.
gc();
gc();
held = held.filter((_, i) => i % 2 === 0);
gc();
const afterGc = oldSpace();
const started = performance.now();
releaseFreedMemory();
const pauseMs = performance.now() - started;
const afterRelease = oldSpace();
process.stdout.write(`${JSON.stringify({ held: held.length, afterGc, afterRelease, pauseMs })}\n`);
