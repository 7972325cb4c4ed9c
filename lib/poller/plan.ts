import { DAY_MS, HOUR_MS, MINUTE_MS } from '../time/index.ts';
import { parseAwb, type Awb, type KeyMode } from '../schemas/index.ts';
/** A shipment the poller may re-poll, as a source (stored events, watches) knows it: its number is stored text. */
export interface RefreshCandidate {
  carrier: string;
  awb: string;
  mode: KeyMode;
  lastPolledMs: number;
}

/** A candidate whose number was parsed: what a poll is asked for. */
export interface PollCandidate extends RefreshCandidate {
  awb: Awb;
}

export interface RefreshPolicy {
  /** Re-poll a shipment once its last poll is this old (default 2 hours). */
  intervalMs: number;
  /** How often the job runs; each run takes its share of the interval's work (default 5 minutes). */
  tickMs: number;
  /** Shipments not polled for this long are left alone (default 30 days). */
  lookbackMs: number;
}

export const DEFAULT_REFRESH_POLICY: RefreshPolicy = { intervalMs: 2 * HOUR_MS, tickMs: 5 * MINUTE_MS, lookbackMs: 30 * DAY_MS };

/**
 * The shipments to re-poll on this tick: due ones (oldest first), at most an even share of all
 * active shipments per tick, so the work spreads over the interval instead of arriving in bursts.
 */
export function shipmentsDue<C extends RefreshCandidate>(candidates: readonly C[], nowMs: number, policy: RefreshPolicy = DEFAULT_REFRESH_POLICY): C[] {
  const recent = candidates.filter((c) => nowMs - c.lastPolledMs <= policy.lookbackMs);
  const ticksPerInterval = Math.max(1, Math.floor(policy.intervalMs / policy.tickMs));
  const share = Math.ceil(recent.length / ticksPerInterval);
  return recent
    .filter((c) => nowMs - c.lastPolledMs >= policy.intervalMs)
    .sort((a, b) => a.lastPolledMs - b.lastPolledMs)
    .slice(0, share);
}

/**
 * The policy for POLLER_INTERVAL_SECONDS: re-poll after the interval, in ticks of 5 minutes (or of
 * the interval itself when shorter, down to 1 s), so short intervals (tests, demos) work too.
 */
export function refreshPolicyOf(intervalSeconds: number): RefreshPolicy {
  const intervalMs = Math.max(1, intervalSeconds) * 1000;
  return { ...DEFAULT_REFRESH_POLICY, intervalMs, tickMs: Math.min(DEFAULT_REFRESH_POLICY.tickMs, intervalMs) };
}

/** node-cron expression of a tick: whole minutes, or seconds (six fields) under a minute. */
export function cronOfTick(tickMs: number): string {
  if (tickMs >= 60_000) return `*/${Math.max(1, Math.round(tickMs / 60_000))} * * * *`;
  return `*/${Math.max(1, Math.round(tickMs / 1000))} * * * * *`;
}

/**
 * Candidates from several sources, once per shipment, with the latest poll time any source knows.
 * This is where a poller's poll enters: each stored number is parsed (lib/schemas/awb.ts), and one
 * the parser refuses is left out, as no carrier could be asked for it.
 */
export function mergeCandidates(...lists: readonly (readonly RefreshCandidate[])[]): PollCandidate[] {
  const merged = new Map<string, PollCandidate>();
  for (const list of lists) {
    for (const c of list) {
      const awb = parseAwb(c.awb);
      if (awb === null) continue;
      const id = `${c.mode}:${c.carrier}:${awb}`;
      const known = merged.get(id);
      if (!known || known.lastPolledMs < c.lastPolledMs) merged.set(id, { ...c, awb });
    }
  }
  return [...merged.values()];
}
