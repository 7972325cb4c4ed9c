/** A shipment the poller may re-poll. */
export interface RefreshCandidate {
  carrier: string;
  awb: string;
  mode: 'test' | 'live';
  lastPolledMs: number;
}

export interface RefreshPolicy {
  /** Re-poll a shipment once its last poll is this old (default 2 hours). */
  intervalMs: number;
  /** How often the job runs; each run takes its share of the interval's work (default 5 minutes). */
  tickMs: number;
  /** Shipments not polled for this long are left alone (default 30 days). */
  lookbackMs: number;
}

export const DEFAULT_REFRESH_POLICY: RefreshPolicy = { intervalMs: 2 * 3_600_000, tickMs: 5 * 60_000, lookbackMs: 30 * 86_400_000 };

/**
 * The shipments to re-poll on this tick: due ones (oldest first), at most an even share of all
 * active shipments per tick, so the work spreads over the interval instead of arriving in bursts.
 */
export function shipmentsDue(candidates: readonly RefreshCandidate[], nowMs: number, policy: RefreshPolicy = DEFAULT_REFRESH_POLICY): RefreshCandidate[] {
  const recent = candidates.filter((c) => nowMs - c.lastPolledMs <= policy.lookbackMs);
  const ticksPerInterval = Math.max(1, Math.floor(policy.intervalMs / policy.tickMs));
  const share = Math.ceil(recent.length / ticksPerInterval);
  return recent
    .filter((c) => nowMs - c.lastPolledMs >= policy.intervalMs)
    .sort((a, b) => a.lastPolledMs - b.lastPolledMs)
    .slice(0, share);
}
