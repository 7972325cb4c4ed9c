/**
 * How far V8 lets the heap outgrow its live data before the next full GC. By default it picks a
 * factor of up to 4 for a busy process: the embedded API (50,000 cached records, ~215 MiB live) sat
 * at 855–1,022 MiB RSS after 1,000,000 lookups and wandered by ±15 % between readings. A fixed 1.5
 * gave ~540 MiB, flat from 750,000 lookups on, at the same lookups/s (`npm run bench -- api`, memory
 * run).
 *
 * A node flag on the command line, not `v8.setFlagsFromString` after start: V8 documents changing
 * flags after start as unsupported, and a flag in the command is visible where the process is
 * started (`npm start` in package.json, the bench's fork). Used by the embedded default and its
 * bench twin. Not by `npm run api`: with Redis holding the cache its live heap is small, and the
 * extra full GCs cost it ~10 % of its lookups per second (measured side by side).
 */
export const HEAP_POLICY_FLAGS: readonly string[] = ['--heap-growing-percent=50'];
