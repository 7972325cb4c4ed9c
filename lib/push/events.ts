/**
 * What push sends: the event types, the event as it travels (Kafka, the state store) and the body a
 * receiver gets. Pure.
 */
import { createHash } from 'node:crypto';
import type { TrackingRecord } from '../schemas/index.ts';
import type { RunningLate } from './running-late.ts';
import type { KeyMode } from '../schemas/index.ts';

/** Most specific first (contracts.md "Push"); `webhook.test` only ever goes to the endpoint tested. */
export const TRACKING_EVENT_TYPES = [
  'tracking.delivered', 'tracking.rto', 'tracking.exception', 'tracking.out_for_delivery', 'tracking.stuck', 'tracking.updated',
  // Not change types of changeOf: events of their own beside them, when insights.prediction's day
  // moves and when the on-time probability falls below the watch's threshold (running-late.ts).
  'tracking.eta_changed', 'tracking.running_late',
] as const;
/** Events of the shipment analyzer (contracts.md "Shipment analyzer"). */
export const ANALYSIS_EVENT_TYPES = ['analysis.completed'] as const;
/** What an endpoint may subscribe to (its `events`). */
export const SUBSCRIBABLE_EVENT_TYPES = [...TRACKING_EVENT_TYPES, ...ANALYSIS_EVENT_TYPES] as const;
export const WEBHOOK_EVENT_TYPES = [...SUBSCRIBABLE_EVENT_TYPES, 'webhook.test'] as const;
export type TrackingEventType = (typeof TRACKING_EVENT_TYPES)[number];
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * One event as the pipeline carries it (Kafka topic tracking.webhook-events.v1, value JSON).
 * `body` is the exact text every attempt sends and signs, so a retry or resend is byte-identical.
 */
export interface WebhookEvent {
  schema: 'webhook_event.v1';
  /** The `webhook-id` of every attempt and resend. */
  id: string;
  key_prefix: string;
  mode: KeyMode;
  type: WebhookEventType;
  carrier: string | null;
  awb: string | null;
  /** Per key and shipment, from 1; 0 for test events. */
  sequence: number;
  created_at: string;
  body: string;
  /** Only to this endpoint (test events and resends); absent: every subscribed endpoint of the key. */
  target_endpoint?: string;
  /** Delivered even if the endpoint already had it (a resend). */
  forced?: boolean;
}

/** Stable per key, shipment and sequence: re-deriving an event after a crash gives the same id. */
export function eventIdOf(keyPrefix: string, mode: KeyMode, carrier: string, awb: string, sequence: number): string {
  const digest = createHash('sha256').update(`${keyPrefix}|${mode}|${carrier}|${awb}|${sequence}`).digest('base64url');
  return `evt_${digest.slice(0, 26)}`;
}

/** The queue an event waits in per endpoint: one per shipment (order is kept per endpoint and shipment). */
export function shipmentKeyOf(event: Pick<WebhookEvent, 'carrier' | 'awb' | 'type'>): string {
  return event.carrier && event.awb ? `${event.carrier}:${event.awb}` : event.type;
}

export interface TrackingEventInput {
  keyPrefix: string;
  mode: KeyMode;
  type: TrackingEventType;
  sequence: number;
  previous: { status: string; current_stage: string } | null;
  newEvents: TrackingRecord['events'];
  tracking: TrackingRecord;
  /** tracking.eta_changed: the delivery day told before (contracts.md "Delivery prediction"). */
  previousDeliveryDate?: string | null;
  /** tracking.running_late: the promise (or null: the EDD), the probability and the predicted day. */
  late?: RunningLate;
  /** When the change was learned: the poll's time, so a re-derived event is byte-identical. */
  atMs: number;
}

export function trackingEvent(input: TrackingEventInput): WebhookEvent {
  const { carrier, awb } = input.tracking;
  const timestamp = new Date(input.atMs).toISOString();
  const data = { carrier, awb, sequence: input.sequence, previous: input.previous, new_events: input.newEvents, tracking: input.tracking };
  const body = JSON.stringify({
    type: input.type,
    timestamp,
    data: input.type === 'tracking.eta_changed' ? { ...data, previous_delivery_date: input.previousDeliveryDate ?? null }
      : input.type === 'tracking.running_late' && input.late
        ? { ...data, promised_by: input.late.promised_by, on_time_probability: input.late.on_time_probability, delivery_date: input.late.delivery_date }
        : data,
  });
  return {
    schema: 'webhook_event.v1',
    id: eventIdOf(input.keyPrefix, input.mode, carrier, awb, input.sequence),
    key_prefix: input.keyPrefix, mode: input.mode, type: input.type, carrier, awb,
    sequence: input.sequence, created_at: timestamp, body,
  };
}

/** `POST /v1/webhooks/{id}/test`: a `webhook.test` event for that endpoint only. */
export function testEvent(keyPrefix: string, mode: KeyMode, endpointId: string, id: string, nowMs: number): WebhookEvent {
  const timestamp = new Date(nowMs).toISOString();
  const body = JSON.stringify({
    type: 'webhook.test', timestamp, data: { endpoint_id: endpointId, message: 'A test event: your endpoint receives and verifies our webhooks.' },
  });
  return {
    schema: 'webhook_event.v1', id, key_prefix: keyPrefix, mode, type: 'webhook.test', carrier: null, awb: null,
    sequence: 0, created_at: timestamp, body, target_endpoint: endpointId, forced: true,
  };
}
