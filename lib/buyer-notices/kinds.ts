/**
 * Which notice a push event is for the shop's customer (contracts.md "Customer notices"). Pure.
 * Notices ride on the same change events as webhooks, so a notice never sees more than a webhook
 * receiver would.
 *
 * One notice per shipment per event: picked up, delivered, running late and returned are each told
 * once; out for delivery and a failed attempt once per attempt (a second attempt is news again).
 */
import type { NdrReason, TrackingRecord } from '../schemas/index.ts';
import type { WebhookEvent } from '../push/index.ts';
import { istDayOf } from '../time/ist-day.ts';

export const NOTICE_KINDS = ['picked_up', 'out_for_delivery', 'delivered', 'failed_attempt', 'running_late', 'returned'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/** What a notice says, taken from the event: the customer's contact is not here. */
export interface NoticeFacts {
  kind: NoticeKind;
  /** Once per shipment per this (e.g. `out_for_delivery#2` for the second attempt's run). */
  dedupeKey: string;
  carrier: string;
  awb: string;
  /** The predicted (or, without one, the carrier's estimated) delivery day, IST YYYY-MM-DD. */
  day: string | null;
  /** A failed attempt's reason. */
  reason: NdrReason | null;
  /** The terminal notices (delivered, returned) end the contact's purpose. */
  ends: boolean;
}

interface EventBody {
  type: string;
  data: { previous: { current_stage: string } | null; new_events: TrackingRecord['events']; tracking: TrackingRecord; delivery_date?: string | null };
}

const RTO_STAGES: ReadonlySet<string> = new Set(['rto_in_transit', 'rto_delivered']);

function dayOf(tracking: TrackingRecord, late: string | null | undefined): string | null {
  if (late) return late;
  if (tracking.insights.prediction?.delivery_date) return tracking.insights.prediction.delivery_date;
  const edd = tracking.estimated_delivery_at;
  return edd ? istDayOf(Date.parse(edd)) : null;
}

/** The notice an event asks for, or null (an update that tells the customer nothing new). */
export function noticeOf(event: WebhookEvent): NoticeFacts | null {
  if (!event.type.startsWith('tracking.') || !event.carrier || !event.awb) return null;
  const body = JSON.parse(event.body) as EventBody;
  const { tracking, previous, new_events: fresh } = body.data;
  const stage = tracking.insights.current_stage;
  const attempts = tracking.delivery_attempts.count;
  const base = { carrier: event.carrier, awb: event.awb, reason: null, ends: false };
  switch (event.type) {
    case 'tracking.delivered':
      return { ...base, kind: 'delivered', dedupeKey: 'delivered', day: null, ends: true };
    case 'tracking.rto':
      return { ...base, kind: 'returned', dedupeKey: 'returned', day: null, ends: true };
    case 'tracking.out_for_delivery':
      return { ...base, kind: 'out_for_delivery', dedupeKey: `out_for_delivery#${attempts + 1}`, day: null };
    case 'tracking.running_late':
      return { ...base, kind: 'running_late', dedupeKey: 'running_late', day: dayOf(tracking, body.data.delivery_date) };
    default:
      break;
  }
  const failed = fresh.filter((e) => e.code === 'delivery_attempted');
  if (failed.length > 0 || (event.type === 'tracking.exception' && stage === 'delivery_attempted' && previous?.current_stage !== stage)) {
    const reason = failed.at(-1)?.reason_code ?? tracking.delivery_attempts.attempts.at(-1)?.reason_code ?? 'other';
    return { ...base, kind: 'failed_attempt', dedupeKey: `failed_attempt#${Math.max(attempts, 1)}`, day: null, reason };
  }
  const before = previous?.current_stage ?? null;
  const firstPickup = tracking.milestones.picked_up_at !== null && (before === null || before === 'awaiting_pickup');
  const pickedNow = fresh.some((e) => e.code === 'picked_up') || firstPickup;
  if (pickedNow && stage !== 'awaiting_pickup' && !RTO_STAGES.has(stage) && stage !== 'delivered') {
    return { ...base, kind: 'picked_up', dedupeKey: 'picked_up', day: dayOf(tracking, null) };
  }
  return null;
}
