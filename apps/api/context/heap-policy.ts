/**
 * How far V8 lets the heap outgrow its live data before the next full GC. By default it picks a
 * factor of up to 4 for a busy process: the embedded API (50,000 cached records, ~215 MiB live) sat
 * at 855–1,022 MiB RSS after 1,000,000 lookups and wandered by ±15 % between readings. A fixed 1.5
 * gave ~540 MiB, flat from 750,000 lookups on, at the same lookups/s (`npm run bench -- api`, memory
 * run).
 *
 * And how large the young generation may grow: on this machine V8 let it grow to 128 MiB (two
 * 64 MiB semi-spaces) during a start's replay of the seeded history, and kept it resident:
 * `npm start` idled at ~430 MiB RSS with ~110 MiB live. 16 MiB semi-spaces (V8's long-time
 * default) idle it at ~350 MiB and 100,000 cached records at 639 MiB instead of ~730, at the same
 * cached lookups/s and CPU per lookup (`npm run bench -- startup`, `-- api`, side by side).
 *
 * A node flag on the command line, not `v8.setFlagsFromString` after start: V8 documents changing
 * flags after start as unsupported, and a flag in the command is visible where the process is
 * started (`npm start` in package.json, the bench's fork). One exception, measured: the idle
 * release compacts its one collection with `--compact-on-every-full-gc` set around it
 * (lib/process/release-memory.ts); on the command line that flag made every collection under load
 * compact and the process larger. Used by the embedded default and its bench twin. Not by
 * `npm run api`: with Redis holding the cache its live heap is small, and the extra full GCs cost
 * it ~10 % of its lookups per second (measured side by side).
 *
 * And `gc` exposed, so the process can give freed memory back (lib/process/release-memory.ts): V8
 * keeps the pages a collection frees resident, and its memory reducer never ran in this process;
 * a restart over a million polls idled at 409 MiB or 574 MiB RSS, depending on whether V8 had
 * collected the checkpoint's decoded copy; with a releasing collection after the start (and the lane
 * book in columns) at 314–333 MiB.
 */
export const HEAP_POLICY_FLAGS: readonly string[] = ['--heap-growing-percent=50', '--max-semi-space-size=16', '--expose-gc'];

/**
 * And glibc's threshold for allocating from mappings of their own, fixed at its 128 KiB default:
 * glibc raises it (up to 32 MiB) each time a large block is freed, after which the large typed
 * arrays a prediction rebuild makes and drops come from its main heap, and freed there they stay
 * resident. A million-poll process went from ~190 MiB before its first rebuild to ~270–285 MiB
 * after it, ~75 MiB of it glibc's heap (`[heap]` in /proc/<pid>/smaps: 34 → 110 MiB) with V8's
 * heap and external memory back where they were; with the threshold fixed, 205 MiB (`[heap]`
 * 18–27 MiB), and the rebuild's peak 505 MiB instead of 596. An environment variable read by the
 * C library when the process starts, so it is part of the start command like the flags; a value
 * set by the operator is kept. Other C libraries ignore it.
 */
export const MALLOC_POLICY_ENV: Readonly<Record<string, string>> = { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072' };

/** The environment of a process started as `npm start` starts the embedded default (`env` plus MALLOC_POLICY_ENV unless set). */
export function withMallocPolicy(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...MALLOC_POLICY_ENV, ...env };
}
