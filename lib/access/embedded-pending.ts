import type { CountEntry } from './embedded-state.ts';

/**
 * Lookups granted but not yet in the journal (the embedded store's group commit): they count
 * against the limits at once, so concurrent lookups stay exact, and take effect in the state only
 * once written. Pure: no I/O.
 */
export class PendingCounts {
  /** Per key prefix, one entry per (period, day) window: almost always just one. */
  private byPrefix = new Map<string, CountEntry[]>();

  get isEmpty(): boolean {
    return this.byPrefix.size === 0;
  }

  /** `n` lookups granted in that window (more than one for a batch). */
  add(prefix: string, periodStart: string, day: string, n = 1): void {
    const entries = this.byPrefix.get(prefix);
    const same = entries?.find((e) => e.period_start === periodStart && e.day === day);
    if (same) same.delta += n;
    else if (entries) entries.push({ op: 'count', prefix, period_start: periodStart, day, delta: n });
    else this.byPrefix.set(prefix, [{ op: 'count', prefix, period_start: periodStart, day, delta: n }]);
  }

  /** Pending lookups of that period, and of that day in that period. */
  counts(prefix: string, periodStart: string, day: string): { period: number; daily: number } {
    let period = 0;
    let daily = 0;
    for (const e of this.byPrefix.get(prefix) ?? []) {
      if (e.period_start !== periodStart) continue;
      period += e.delta;
      if (e.day === day) daily += e.delta;
    }
    return { period, daily };
  }

  /** Every pending entry (one journal line per window), leaving none. */
  take(): CountEntry[] {
    const entries = [...this.byPrefix.values()].flat();
    this.byPrefix = new Map();
    return entries;
  }
}
