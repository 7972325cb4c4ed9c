/**
 * Giving freed memory back to the operating system, where the process exposes `gc` (`npm start`
 * does: apps/api/context/heap-policy.ts).
 *
 * Why a plain `gc()` is not enough: V8 (13.6, Node 24) keeps the pages a full collection frees in a
 * pool, resident, for its next allocations; only a collection that reduces the memory footprint
 * hands them back, and V8's own memory reducer, which should start one when the process goes
 * quiet, never judged this process idle (`--trace-memory-reducer`: "high alloc, foreground", every
 * 8 s, while it sat waiting). Measured with a script that peaks at ~250 MiB of garbage and keeps
 * 45 MiB: after `gc()` 259–346 MiB RSS with a 48–79 MiB heap, after this one 103–105 MiB.
 */

import { performance } from 'node:perf_hooks';
// The one flag set at run time, for one collection (releaseFreedMemory says why); heap-policy.ts has the rest.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- a flag read when each collection starts, measured
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** The options V8's gc extension reads (`--expose-gc`): "last-resort" collects all it can and shrinks. */
interface GcOptions {
  type: 'major';
  execution: 'sync';
  flavor: 'last-resort';
}

type ExposedGc = (options?: GcOptions) => void;

/** Whether this process can release memory (`gc` is exposed). */
export function canReleaseMemory(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function';
}

/** The old generation's pages: what is committed (resident) and what its live objects use. */
export interface OldSpace {
  committedBytes: number;
  usedBytes: number;
}

/** The old generation now (what the release decides on; its test child reads it too). */
export function oldSpaceNow(): OldSpace {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  return { committedBytes: space?.physical_space_size ?? 0, usedBytes: space?.space_used_size ?? 0 };
}

/**
 * Whether the old generation's free room is worth a compacting collection: more than 32 MiB and a
 * fifth of what lives there. A compaction moves every live object of the pages it empties, so it
 * pauses ~1 s at 200 MiB live against ~0.1 s for the plain release (testutil/fragmented-heap.ts).
 */
export function worthCompacting(space: OldSpace): boolean {
  const free = space.committedBytes - space.usedBytes;
  return free > 32 * 2 ** 20 && free > space.usedBytes / 5;
}

/**
 * Collects all garbage and returns the freed pages to the system; does nothing when `gc` is not
 * exposed. A full, blocking collection (repeated while it still frees something): call it where a
 * pause is harmless, after a start's load or on an idle timer, never per request.
 *
 * A collection frees whole pages only. Where objects died here and there (the in-process cache's
 * evicted records among the ones it keeps), V8's heuristics leave most pages in place: 100,000
 * cached lookups idled with 248 MiB of old space committed for 177 MiB live. When that room is
 * worth it, a second collection compacts: V8's `--compact-on-every-full-gc`, set for that one
 * collection only (the flag is read when a collection starts; set for good, it made every
 * collection under load compact and the process larger, measured).
 */
export function releaseFreedMemory(options: { compact: boolean } = { compact: true }): void {
  const gc = (globalThis as { gc?: ExposedGc }).gc;
  if (gc === undefined) return;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  if (!options.compact || !worthCompacting(oldSpaceNow())) return;
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/** How often the idle release looks, and what it needs to see before it collects. */
export interface IdleReleasePolicy {
  /** Between looks (ms). */
  everyMs: number;
  /** The event loop's busy share over the last interval at or below which the process is idle. */
  idleUtilization: number;
  /** How far the resident memory must have grown since the last release before another one pays off. */
  growthBytes: number;
}

/** Every 30 s; idle below 5 % busy; 32 MiB grown. A release pauses ~80–360 ms (0–215 MiB live): only when idle. */
export const DEFAULT_IDLE_RELEASE: IdleReleasePolicy = { everyMs: 30_000, idleUtilization: 0.05, growthBytes: 32 * 2 ** 20 };

/** Whether to release now: the loop was idle over the interval and resident memory grew enough since the last release. */
export function shouldRelease(policy: IdleReleasePolicy, look: { utilization: number; rssBytes: number; rssAfterLastRelease: number }): boolean {
  return look.utilization <= policy.idleUtilization && look.rssBytes - look.rssAfterLastRelease >= policy.growthBytes;
}

/**
 * The memory reducer V8 does not run here (see above), for a process whose start is done: one
 * releasing collection at once (a start's garbage: a seed, a replay, a checkpoint's decoded copy),
 * then every `everyMs`, when the event loop was idle over the interval and the process grew since
 * it last gave memory back, one more. A busy process is left alone (its heap is bounded by the
 * heap policy); one that went quiet after a burst (a batch of first lookups) drops back to what it
 * holds. Returns the stop; does nothing where `gc` is not exposed.
 */
export function startReleasingMemory(policy: IdleReleasePolicy = DEFAULT_IDLE_RELEASE): () => void {
  if (!canReleaseMemory()) return () => undefined;
  // Not compacting here: a start's garbage (a checkpoint's decoded copy) frees whole pages; at a
  // million polls a compaction here moved neither the idle RSS nor the time to ready, and its pause
  // would fall on the first requests.
  releaseFreedMemory({ compact: false });
  let rssAfterLastRelease = process.memoryUsage.rss();
  let since = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, since);
    since = now;
    if (!shouldRelease(policy, { utilization, rssBytes: process.memoryUsage.rss(), rssAfterLastRelease })) return;
    releaseFreedMemory();
    rssAfterLastRelease = process.memoryUsage.rss();
  }, policy.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
