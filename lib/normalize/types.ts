import type { NdrReason, Stage, TrackingRecord } from '../schemas/index.ts';

/** A tracking record before insights: what normalization of one poll yields (cached/stale false). */
export type BaseRecord = Omit<TrackingRecord, 'insights'>;

/** Facts insights are computed from; kept beside the record so insights need no re-normalization. */
export interface ShipmentFacts {
  stage: Stage;
  /** Epoch ms of the first physical scan (pickup or later), null before pickup. */
  first_physical_scan_ms: number | null;
  /** Epoch ms of the latest scan, null when there are none. */
  last_scan_ms: number | null;
  /** Epoch ms of the scan that made the shipment terminal (delivered, returned to sender, cancelled). */
  terminal_at_ms: number | null;
  hub_count: number;
  unmapped_scans: number;
  /** `carrier:origin3:destination3` (decisions.md "Lane benchmark"), null without both pincodes. */
  lane: string | null;
}

export interface NormalizedShipment {
  record: BaseRecord;
  facts: ShipmentFacts;
}

/** Epoch ms normalization read from a poll whose record it found (normalizePollTimed). */
export interface PollTimes {
  /** Of each scan, in the poll's own order (poll.scans). */
  scanMs: number[];
  /** Of each event, in the record's order (record.events, newest first). */
  eventMs: number[];
  polledMs: number;
}

export type NormalizeResult =
  | { kind: 'found'; shipment: NormalizedShipment }
  | { kind: 'not_found' }
  | { kind: 'error'; error: string };

export type { NdrReason };
