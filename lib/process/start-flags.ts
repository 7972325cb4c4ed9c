/**
 * The node flags that preload lib/process/compile-cache.mjs, as the npm start scripts write them
 * (package.json; heap-policy.test.ts checks `npm start`'s). Relative to the repository's root, where
 * npm runs scripts; a fork of a start command (the benches, the embedded test harness) passes the
 * same so it measures and runs what `npm start` does.
 */
export const COMPILE_CACHE_FLAGS: readonly string[] = ['--import', './lib/process/compile-cache.mjs'];
