/**
 * One cell of the model (a level key × stage × time-in-stage bucket): its counts of working days
 * left, k = 0..MAX_K, and the nested family of windows calibration chooses from (pure).
 *
 * The family. Days are ranked from the mode outward: each day's rank key is the smallest count
 * between the mode and it (a running minimum, so a day never ranks before a nearer one on its side),
 * higher first, then the nearer to the mode, then the earlier. Every prefix of that ranking is a
 * contiguous range of days, and the prefixes are nested: the window "at threshold t" is the prefix
 * whose days each have a score ≤ t, where a day's score is the share of the cell's deliveries inside
 * the prefix that ends with it, in thousandths (rounded up), and past full mass 1000 + the number of
 * (empty) days added since. A delivery's score under a cell is its day's score: split-conformal
 * calibration takes a quantile of those scores (model.ts), and a window at that threshold covers
 * that share of recent deliveries. Thresholds are fractions of the cell's mass, not whole days, so
 * one threshold gives a one-day window to a sharp cell and three days to a spread one.
 *
 * lib/clickhouse/prediction.ts computes the same scores in SQL for the calibration step
 * (`binsSql`): change both together (the services test compares them).
 */
export const MAX_K = 45;
/** Counts per cell: k = 0..MAX_K. */
export const K_SLOTS = MAX_K + 1;
/** Scores are thousandths of the cell's deliveries. */
export const SCORE_SCALE = 1000;

export interface RankedCell {
  n: number;
  /** The most frequent count (the earliest of ties). */
  mode: number;
  /** The smallest k with at least half the deliveries at or below it. */
  median: number;
  /** Days in rank order. */
  order: Uint8Array;
  /** score[j]: the score of order[j] (non-decreasing in j). */
  score: Uint16Array;
}

/** Ranks a cell's days and scores them (see the file's comment). `counts` has K_SLOTS entries. */
export function rankCell(counts: ArrayLike<number>): RankedCell {
  let n = 0;
  let mode = 0;
  for (let k = 0; k < K_SLOTS; k++) {
    n += counts[k]!;
    if (counts[k]! > counts[mode]!) mode = k;
  }
  let median = 0;
  for (let running = 0; median < MAX_K; median++) {
    running += counts[median]!;
    if (running * 2 >= n) break;
  }
  // Running minimum from the mode outward.
  const key = new Float64Array(K_SLOTS);
  key[mode] = counts[mode]!;
  for (let k = mode - 1; k >= 0; k--) key[k] = Math.min(key[k + 1]!, counts[k]!);
  for (let k = mode + 1; k < K_SLOTS; k++) key[k] = Math.min(key[k - 1]!, counts[k]!);
  const days = Array.from({ length: K_SLOTS }, (_, k) => k);
  days.sort((a, b) => key[b]! - key[a]! || Math.abs(a - mode) - Math.abs(b - mode) || a - b);
  const order = Uint8Array.from(days);
  const score = new Uint16Array(K_SLOTS);
  let cum = 0;
  let full = -1;
  for (let j = 0; j < K_SLOTS; j++) {
    cum += counts[order[j]!]!;
    if (n > 0 && cum < n) score[j] = Math.floor((cum * SCORE_SCALE + n - 1) / n);
    else {
      if (full < 0) full = j;
      score[j] = SCORE_SCALE + j - full;
    }
  }
  return { n, mode, median, order, score };
}

/** The score of a delivery `k` working days out under a ranked cell. */
export function scoreOf(cell: RankedCell, k: number): number {
  for (let j = 0; j < K_SLOTS; j++) if (cell.order[j] === k) return cell.score[j]!;
  return cell.score[K_SLOTS - 1]!;
}

/** Per day its score (the inverse of the ranking): what the calibration looks up per delivery. */
export function scoresByDay(cell: RankedCell): Uint16Array {
  const byDay = new Uint16Array(K_SLOTS);
  for (let j = 0; j < K_SLOTS; j++) byDay[cell.order[j]!] = cell.score[j]!;
  return byDay;
}

/**
 * The window [a, b] of k at threshold `t`: the ranked prefix with scores ≤ t, never less than the
 * mode, and no longer once its days hold `enough` of the cell (thousandths; the target itself).
 *
 * Why the cap: a delivery on the mode scores the mode's share, which differs from cell to cell. Where
 * most deliveries fall on the mode (after a failed attempt, ~95 %), the 90 % quantile of the scores
 * lands on the sharpest cells' shares, and every other cell then took a second day it did not need
 * (p90 covered 0.996 at two days on the sandbox). A cell whose mode alone holds 90 % of it already
 * covers the target; calibration still widens the cells that fall short of it.
 */
export function windowAt(cell: RankedCell, t: number, enough: number = Infinity): [number, number] {
  let a = cell.order[0]!;
  let b = a;
  for (let j = 1; j < K_SLOTS && cell.score[j]! <= t && cell.score[j - 1]! < enough; j++) {
    const k = cell.order[j]!;
    if (k < a) a = k;
    if (k > b) b = k;
  }
  return [a, b];
}
