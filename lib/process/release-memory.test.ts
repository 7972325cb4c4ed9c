/**
 * Giving memory back (release-memory.ts): in a real child process, a releasing collection returns
 * the pages a plain gc() keeps pooled and compacts an old generation whose pages are half empty; and
 * the idle policy's decisions.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { DEFAULT_IDLE_RELEASE, shouldRelease, worthCompacting } from './release-memory.ts';

const MiB = 2 ** 20;

it('after a garbage peak, the release leaves far less resident than a plain gc()', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--max-semi-space-size=16', join(import.meta.dirname, 'testutil/garbage-peak.ts')]);
  const { kept, afterGc, afterRelease } = JSON.parse(stdout) as { kept: number; afterGc: number; afterRelease: number };
  expect(kept).toBe(300_000);
  // Measured: 259–346 MiB after gc(), 103–105 MiB after the release (~45 MiB live).
  expect(afterRelease, `${Math.round(afterGc / MiB)} → ${Math.round(afterRelease / MiB)} MiB`).toBeLessThan(afterGc * 0.6);
}, 60_000);

it('compacts an old generation whose live objects are scattered over its pages', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--max-semi-space-size=16', join(import.meta.dirname, 'testutil/fragmented-heap.ts')]);
  type OldSpace = { committed: number; used: number };
  const { held, afterGc, afterRelease } = JSON.parse(stdout) as { held: number; afterGc: OldSpace; afterRelease: OldSpace };
  expect(held).toBe(35_000);
  // Every page keeps half its strings: a plain gc() frees no page.
  expect(afterGc.committed).toBeGreaterThan(afterGc.used * 1.5);
  // Measured: 131.5 MiB committed for 131.2 live; without the compaction 209 MiB.
  expect(afterRelease.committed, `${Math.round(afterRelease.committed / MiB)} MiB for ${Math.round(afterRelease.used / MiB)} live`).toBeLessThan(afterRelease.used * 1.1);
}, 60_000);

it('compacts only when the free room is large, absolutely and against what lives there', () => {
  expect(worthCompacting({ committedBytes: 248 * MiB, usedBytes: 177 * MiB })).toBe(true);
  // 30 MiB free: the plain release is enough.
  expect(worthCompacting({ committedBytes: 130 * MiB, usedBytes: 100 * MiB })).toBe(false);
  // 40 MiB free of 300 live: under a fifth, not worth a second of pause.
  expect(worthCompacting({ committedBytes: 340 * MiB, usedBytes: 300 * MiB })).toBe(false);
});

it('releases only when the loop was idle and the process grew since the last release', () => {
  const grown = { rssBytes: 300 * MiB, rssAfterLastRelease: 200 * MiB };
  expect(shouldRelease(DEFAULT_IDLE_RELEASE, { utilization: 0.01, ...grown })).toBe(true);
  // Busy: a full collection would pause requests; the heap policy bounds a busy heap.
  expect(shouldRelease(DEFAULT_IDLE_RELEASE, { utilization: 0.4, ...grown })).toBe(false);
  // Idle but not grown: nothing to give back since the last release.
  expect(shouldRelease(DEFAULT_IDLE_RELEASE, { utilization: 0, rssBytes: 210 * MiB, rssAfterLastRelease: 200 * MiB })).toBe(false);
  expect(shouldRelease(DEFAULT_IDLE_RELEASE, { utilization: 0.05, rssBytes: 232 * MiB, rssAfterLastRelease: 200 * MiB })).toBe(true);
});
