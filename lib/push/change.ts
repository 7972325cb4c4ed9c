/**
 * Change detection (pure): what a watch remembers of the shipment it last reported, whether a new
 * record is a change worth an event, and which event type it is.
 */
import type { Stage, TrackingRecord } from '../schemas/index.ts';
import type { TrackingEventType } from './events.ts';

/** What a watch remembers of the last state it reported (or of the state when the watch began). */
export interface ShipmentSnapshot {
  /** Time of the poll this state came from: an older poll arriving late is ignored. */
  polled_ms: number;
  /** Null while the carrier had no scans for the number. */
  status: string | null;
  stage: Stage | null;
  attempts: number;
  stuck: boolean;
  event_ids: string[];
}

export const EMPTY_SNAPSHOT: Omit<ShipmentSnapshot, 'polled_ms'> = { status: null, stage: null, attempts: 0, stuck: false, event_ids: [] };

export function snapshotOf(record: TrackingRecord | null, polledMs: number): ShipmentSnapshot {
  if (!record) return { ...EMPTY_SNAPSHOT, polled_ms: polledMs };
  return {
    polled_ms: polledMs,
    status: record.status,
    stage: record.insights.current_stage as Stage,
    attempts: record.delivery_attempts.count,
    stuck: record.insights.is_stuck,
    event_ids: record.events.map((e) => e.event_id),
  };
}

export interface Change {
  type: TrackingEventType;
  newEvents: TrackingRecord['events'];
  previous: { status: string; current_stage: string } | null;
}

const RTO_STAGES: ReadonlySet<string> = new Set(['rto_in_transit', 'rto_delivered']);
const EXCEPTION_STAGES: ReadonlySet<string> = new Set(['delivery_attempted', 'exception']);
const EXCEPTION_CODES: ReadonlySet<string> = new Set(['delivery_attempted', 'exception']);

/**
 * The change from `before` to `record`, or null when nothing a receiver cares about moved: a new
 * event, status, stage or attempt count, or `is_stuck` turning true (it turning false comes with a
 * new scan anyway). The type is the most specific that applies (contracts.md "Push").
 * `legacyIdOf` gives an event's id from before location was part of it: a snapshot taken before
 * that change holds those, and its events are not new.
 */
export function changeOf(
  before: ShipmentSnapshot, record: TrackingRecord, legacyIdOf: (eventId: string) => string | undefined = () => undefined,
): Change | null {
  const after = snapshotOf(record, before.polled_ms);
  const known = new Set(before.event_ids);
  const isKnown = (id: string) => {
    if (known.has(id)) return true;
    const legacy = legacyIdOf(id);
    return legacy !== undefined && known.has(legacy);
  };
  const newEvents = record.events.filter((e) => !isKnown(e.event_id));
  const stuckNow = after.stuck && !before.stuck;
  const moved = newEvents.length > 0 || after.status !== before.status || after.stage !== before.stage || after.attempts !== before.attempts;
  if (!moved && !stuckNow) return null;

  const stageChanged = after.stage !== before.stage;
  const stage = after.stage ?? '';
  let type: TrackingEventType = 'tracking.updated';
  if (stage === 'delivered' && stageChanged) type = 'tracking.delivered';
  else if (RTO_STAGES.has(stage) && stageChanged) type = 'tracking.rto';
  else if ((EXCEPTION_STAGES.has(stage) && stageChanged) || newEvents.some((e) => EXCEPTION_CODES.has(e.code))) type = 'tracking.exception';
  else if (stage === 'out_for_delivery' && stageChanged) type = 'tracking.out_for_delivery';
  else if (stuckNow) type = 'tracking.stuck';

  const previous = before.status !== null && before.stage !== null ? { status: before.status, current_stage: before.stage } : null;
  return { type, newEvents, previous };
}

/** tracking.eta_changed is sent at most once per shipment and watch in this long (contracts.md). */
export const ETA_CHANGE_MIN_INTERVAL_MS = 6 * 60 * 60 * 1000;

export interface EtaState {
  eta_date?: string | null;
  eta_sent_ms?: number | null;
}

/**
 * Whether the predicted delivery day moved since the day last told (by a day or more: days are
 * whole), and the watch's next ETA state. The first day seen is remembered, not told; a move within
 * 6 h of the last told one waits (the day is compared again at the next poll after that).
 */
export function etaChangeOf(state: EtaState, record: TrackingRecord, polledMs: number): { changed: { previous: string } | null; next: Required<EtaState> } {
  const day = record.insights.prediction?.delivery_date ?? null;
  const told = state.eta_date ?? null;
  const sent = state.eta_sent_ms ?? null;
  if (day === null) return { changed: null, next: { eta_date: told, eta_sent_ms: sent } };
  if (told === null) return { changed: null, next: { eta_date: day, eta_sent_ms: sent } };
  if (day === told || (sent !== null && polledMs - sent < ETA_CHANGE_MIN_INTERVAL_MS)) return { changed: null, next: { eta_date: told, eta_sent_ms: sent } };
  return { changed: { previous: told }, next: { eta_date: day, eta_sent_ms: polledMs } };
}
