/** The figures every bench section reports its measurements with: one definition each, so sections compare. */

/**
 * The p-th percentile (p in 0..100) of ascending `sorted` by nearest rank: the smallest value with
 * at least p % of the values at or below it (p99 of 100 latencies is the 99th). NaN when empty.
 */
export function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? Number.NaN;
}

/** `n` rounded to `digits` decimals, for a result row. */
export const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The arithmetic mean; NaN when empty. */
export const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
