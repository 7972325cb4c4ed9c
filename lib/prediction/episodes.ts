/**
 * A shipment's stages over time, read from its record's events (pure). The normalizer keeps only
 * the current stage; the model needs when each stage began and ended, both for the delivered
 * shipments it learns from and for the time a moving shipment has already spent in its stage.
 */
import type { BaseRecord } from '../normalize/types.ts';
import type { Stage, TrackingEvent } from '../schemas/index.ts';

export interface StageEpisode {
  stage: Stage;
  /** Epoch ms of the event that began it. */
  enteredMs: number;
  /** Epoch ms of the event that ended it (the next stage's start), null for the current one. */
  leftMs: number | null;
}

const PRE_PICKUP = new Set(['pending', 'order_placed', 'awaiting_pickup', 'shipped']);
const TERMINAL: ReadonlySet<Stage> = new Set(['delivered', 'rto_delivered', 'cancelled']);

/** The stage an event puts a shipment in: the same reading as lib/normalize's stageOf. */
function stageOfEvent(e: TrackingEvent, returning: boolean): Stage {
  if (e.status === 'cancelled') return 'cancelled';
  if (e.code === 'rto_delivered') return 'rto_delivered';
  if (returning && e.status !== 'exception') return 'rto_in_transit';
  if (e.status === 'exception') return e.code === 'delivery_attempted' ? 'delivery_attempted' : 'exception';
  if (e.status === 'delivered') return 'delivered';
  if (e.status === 'out_for_delivery') return 'out_for_delivery';
  if (PRE_PICKUP.has(e.status)) return 'awaiting_pickup';
  return 'in_transit';
}

/**
 * Episodes in time order. A booked shipment begins `awaiting_pickup` at its booking time when the
 * carrier gave one before its first scan. Unmapped events (`unknown`) change nothing.
 */
export function stageEpisodes(record: Pick<BaseRecord, 'events' | 'shipment'>): StageEpisode[] {
  const episodes: StageEpisode[] = [];
  const booked = record.shipment.booked_at === null ? null : Date.parse(record.shipment.booked_at);
  let returning = false;
  // Events are stored newest first.
  for (let i = record.events.length - 1; i >= 0; i--) {
    const e = record.events[i]!;
    if (e.code === 'unknown') continue;
    const ms = Date.parse(e.timestamp);
    if (e.code === 'rto_initiated' || e.code === 'rto_delivered' || e.status === 'returned') returning = true;
    const stage = stageOfEvent(e, returning);
    const current = episodes[episodes.length - 1];
    if (current && TERMINAL.has(current.stage)) break;
    if (current === undefined && booked !== null && booked < ms && stage !== 'awaiting_pickup') {
      episodes.push({ stage: 'awaiting_pickup', enteredMs: booked, leftMs: null });
    }
    const last = episodes[episodes.length - 1];
    if (last && last.stage === stage) continue;
    if (last) last.leftMs = ms;
    episodes.push({ stage, enteredMs: ms, leftMs: null });
  }
  return episodes;
}

/**
 * When the run of one stage that episode `i` belongs to began: episodes of one stage that continue one
 * another (an in-transit stay split at each new place, records.ts splitAtNewPlaces) are one run, and
 * in transit the run began at the pickup.
 */
export function runEnteredMs(episodes: readonly StageEpisode[], i: number): number {
  while (i > 0 && episodes[i - 1]!.stage === episodes[i]!.stage && episodes[i - 1]!.leftMs === episodes[i]!.enteredMs) i--;
  return episodes[i]!.enteredMs;
}
