import type { KeyMode } from '../schemas/index.ts';
/**
 * A closed shipment's contribution to its lane's windowed statistics (contracts.md "Lanes"): one
 * record per shipment, fixed once it closes (terminal states are final). Derived by one pure
 * function from the few facts both stores have — the shipments row + event rows in ClickHouse,
 * the normalized record in the embedded default — so both compute the same figures.
 */
export type LaneOutcome = 'delivered' | 'rto' | 'cancelled';

export interface LaneClosure {
  /** Benchmark key: `carrier:origin3:destination3`, `test:`-prefixed for sandbox shipments. */
  lane: string;
  carrier: string;
  awb: string;
  mode: KeyMode;
  outcome: LaneOutcome;
  /** Whole seconds (ClickHouse DateTime): when the terminal scan happened. */
  closedAtS: number;
  /** First physical scan → delivery in days, not rounded; delivered only. */
  transitDays: number | null;
  /** Delivered with a carrier EDD: 1 when delivered by it, 0 when after; else null. */
  onTime: 0 | 1 | null;
  /** Delivered: 1 when no failed attempt came first; else null. */
  firstAttempt: 0 | 1 | null;
  /** Reason code of each failed delivery attempt, in time order ('other' when none was read). */
  ndrReasons: string[];
  /** Orders rows of the same shipment: the newest poll's (its polled_at in ms) wins. */
  version: number;
}

/** The event fields a closure needs (a record's event or an `events` row). */
export interface ClosureEvent {
  event_id: string;
  occurredMs: number;
  code: string;
  status: string;
  reason_code: string | null;
}

export interface ClosureFacts {
  carrier: string;
  awb: string;
  mode: KeyMode;
  /** `carrier:o3:d3` or null (no lane, no closure). */
  lane: string | null;
  stage: string;
  eddMs: number | null;
  /** Forward delivery attempts, the successful one included (record.delivery_attempts.count). */
  attempts: number;
  transitDays: number | null;
  events: readonly ClosureEvent[];
  version: number;
}

const OUTCOME: Readonly<Record<string, LaneOutcome>> = { delivered: 'delivered', rto_delivered: 'rto', cancelled: 'cancelled' };

/**
 * The terminal scan: the earliest event that delivers (`delivered`), completes the return
 * (`rto_delivered`) or cancels (status `cancelled`). Events sharing an event_id count once.
 */
function closingMs(events: readonly ClosureEvent[]): number | null {
  let at: number | null = null;
  for (const e of events) {
    if (e.code === 'delivered' || e.code === 'rto_delivered' || e.status === 'cancelled') {
      if (at === null || e.occurredMs < at) at = e.occurredMs;
    }
  }
  return at;
}

/** null unless the shipment has a lane and a terminal stage with its terminal scan. */
export function laneClosureOf(facts: ClosureFacts): LaneClosure | null {
  const outcome = OUTCOME[facts.stage];
  if (!facts.lane || !outcome) return null;
  const closedMs = closingMs(facts.events);
  if (closedMs === null) return null;
  const closedAtS = Math.floor(closedMs / 1000);
  const seen = new Set<string>();
  const failed: ClosureEvent[] = [];
  for (const e of facts.events) {
    if (seen.has(e.event_id)) continue;
    seen.add(e.event_id);
    if (e.code === 'delivery_attempted') failed.push(e);
  }
  failed.sort((a, b) => a.occurredMs - b.occurredMs || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
  const delivered = outcome === 'delivered';
  return {
    lane: facts.mode === 'test' ? `test:${facts.lane}` : facts.lane,
    carrier: facts.carrier,
    awb: facts.awb,
    mode: facts.mode,
    outcome,
    closedAtS,
    transitDays: delivered ? facts.transitDays : null,
    // EDDs are whole seconds in ClickHouse too: compare at that precision.
    onTime: delivered && facts.eddMs !== null ? (closedAtS <= Math.floor(facts.eddMs / 1000) ? 1 : 0) : null,
    firstAttempt: delivered ? (facts.attempts <= 1 ? 1 : 0) : null,
    ndrReasons: failed.map((e) => e.reason_code ?? 'other'),
    version: facts.version,
  };
}
