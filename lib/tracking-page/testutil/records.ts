/**
 * Tracking records of the page's states, built by hand and checked by the zod schema, so a record
 * the API could never answer cannot slip into a page test. Test support only.
 */
import { type NdrReason, type Status, type TrackingEvent, type TrackingRecord, TrackingRecordSchema } from '../../schemas/index.ts';
import { HOUR_MS } from '../../time/index.ts';
import type { PageBranding, ScannedShipment } from '../types.ts';

/** The tests' "now": Thursday 26 November 2026, 15:30 IST. */
export const NOW_MS = Date.parse('2026-11-26T10:00:00.000Z');

const iso = (ms: number) => new Date(ms).toISOString();

export interface EventInput {
  status: Status;
  code: TrackingEvent['code'];
  hoursAgo: number;
  description?: string;
  location?: string;
  reason_code?: NdrReason | null;
}

export function event(input: EventInput, i: number): TrackingEvent {
  return {
    event_id: `ev-${i}`,
    timestamp: iso(NOW_MS - input.hoursAgo * HOUR_MS),
    status: input.status,
    status_text: input.status.replace(/_/g, ' '),
    code: input.code,
    reason_code: input.reason_code ?? null,
    facility: input.location ?? 'Delhi_Bilaspur_HB',
    location: input.location ?? 'Delhi_Bilaspur_HB (Haryana)',
    description: input.description ?? 'Shipment forwarded',
    mapping_version: 'test',
  };
}

const BOOKED: EventInput = { status: 'order_placed', code: 'booked', hoursAgo: 50, description: 'Consignment Manifested', location: 'New Delhi' };
const PICKED: EventInput = { status: 'picked_up', code: 'picked_up', hoursAgo: 40, description: 'Shipment picked up', location: 'New Delhi' };
const HUB: EventInput = { status: 'in_transit', code: 'received', hoursAgo: 20, description: 'Bag Received at Facility', location: 'Nagpur Gateway' };

export interface RecordInput {
  awb?: string;
  carrier?: string;
  status: Status;
  events: EventInput[];
  stage: TrackingRecord['insights']['current_stage'];
  prediction?: TrackingRecord['insights']['prediction'];
  attempts?: TrackingRecord['delivery_attempts']['attempts'];
}

export function record(input: RecordInput): TrackingRecord {
  const events = input.events.map(event);
  const at = (code: TrackingEvent['code']) => events.find((e) => e.code === code)?.timestamp ?? null;
  const delivered = input.status === 'delivered';
  const last = events.reduce((max, e) => (e.timestamp > max ? e.timestamp : max), iso(NOW_MS - 60 * HOUR_MS));
  return TrackingRecordSchema.parse({
    awb: input.awb ?? '1234567890102',
    tracking_number: input.awb ?? '1234567890102',
    carrier: input.carrier ?? 'delhivery',
    status: input.status,
    status_text: input.status.replace(/_/g, ' '),
    is_delivered: delivered,
    is_rto: false,
    origin: { city: 'New Delhi', state: 'Delhi', pincode: '110001' },
    destination: { city: 'Bengaluru', state: 'Karnataka', pincode: '560001' },
    estimated_delivery_at: null,
    delivered_at: delivered ? at('delivered') : null,
    first_scan_at: events[0]?.timestamp ?? null,
    last_location: events.at(-1)?.location ?? null,
    last_known_location: events.at(-1)?.location ?? null,
    last_updated_at: last,
    last_polled_at: iso(NOW_MS - HOUR_MS),
    cached: true,
    stale: false,
    mapping_version: 'test',
    shipment: { service_type: 'surface', weight_grams: 500, origin: null, destination: null, booked_at: at('booked') },
    milestones: {
      booked_at: at('booked'),
      picked_up_at: at('picked_up'),
      in_transit_at: at('received'),
      out_for_delivery_at: at('out_for_delivery'),
      first_attempt_at: at('delivery_attempted'),
      delivered_at: at('delivered'),
      rto_initiated_at: null,
      rto_delivered_at: null,
    },
    delivery_attempts: { count: input.attempts?.length ?? 0, attempts: input.attempts ?? [] },
    insights: {
      transit_days_elapsed: 1.7,
      hours_since_last_scan: delivered ? null : 2,
      is_stuck: false,
      is_late_vs_carrier_edd: null,
      delay_days_vs_carrier_edd: null,
      hub_count: 2,
      current_stage: input.stage,
      requires_attention: input.stage === 'delivery_attempted',
      attention_reason: input.stage === 'delivery_attempted' ? 'failed_attempt' : null,
      benchmark: { median_transit_days_for_route: null, sample_size: null, expected_delivery_by: null },
      prediction: input.prediction ?? null,
    },
    events,
  });
}

/** A prediction: delivery on `day`, the p90 window ending on `p90End`. */
export function prediction(day: string, p90End: string, promisedBy?: string): NonNullable<TrackingRecord['insights']['prediction']> {
  return {
    delivery_date: day,
    window: { p80: [day, p90End], p90: [day, p90End] },
    on_time_probability: null,
    basis: { level: 'lane', sample_size: 412, stage: 'in_transit', position: 'en_route', model_at: '2026-11-26T00:00:00.000Z' },
    ...(promisedBy ? { promise: { promised_by: promisedBy, on_time_probability: 0.2 } } : {}),
  };
}

/** On the way, predicted for Saturday 28 November, 9 in 10 by Monday 30 November. */
export function moving(awb = '1234567890102', carrier = 'delhivery'): ScannedShipment {
  return {
    record: record({
      awb, carrier, status: 'in_transit', stage: 'in_transit', events: [BOOKED, PICKED, HUB], prediction: prediction('2026-11-28', '2026-11-30'),
    }),
    running_late: false,
    promised_by: null,
  };
}

/** A failed attempt for `reason`, waiting for the next one. */
export function failedAttempt(reason: NdrReason): ScannedShipment {
  const failedAt = NOW_MS - 3 * HOUR_MS;
  return {
    record: record({
      status: 'exception',
      stage: 'delivery_attempted',
      events: [BOOKED, PICKED, HUB,
        { status: 'out_for_delivery', code: 'out_for_delivery', hoursAgo: 8, description: 'Out for delivery', location: 'Bengaluru_Koramangala_DC' },
        {
          status: 'exception', code: 'delivery_attempted', hoursAgo: 3, description: 'Delivery attempted', location: 'Bengaluru_Koramangala_DC',
          reason_code: reason,
        }],
      attempts: [{ at: iso(failedAt), outcome: 'failed', reason_code: reason, reason_text: 'Delivery attempted' }],
      prediction: prediction('2026-11-27', '2026-11-29'),
    }),
    running_late: false,
    promised_by: null,
  };
}

/** Promised for Friday 27 November; now predicted for Monday 30 November. */
export function runningLate(): ScannedShipment {
  return {
    record: record({
      status: 'in_transit', stage: 'in_transit', events: [BOOKED, PICKED, HUB], prediction: prediction('2026-11-30', '2026-12-02', '2026-11-27'),
    }),
    running_late: true,
    promised_by: '2026-11-27',
  };
}

/** Delivered on Wednesday 25 November. */
export function delivered(): ScannedShipment {
  return {
    record: record({
      status: 'delivered',
      stage: 'delivered',
      events: [BOOKED, PICKED, HUB,
        { status: 'out_for_delivery', code: 'out_for_delivery', hoursAgo: 30, description: 'Out for delivery', location: 'Bengaluru_Koramangala_DC' },
        { status: 'delivered', code: 'delivered', hoursAgo: 26, description: 'Delivered', location: 'Bengaluru_Koramangala_DC' }],
      attempts: [{ at: iso(NOW_MS - 26 * HOUR_MS), outcome: 'delivered', reason_code: null, reason_text: null }],
    }),
    running_late: false,
    promised_by: null,
  };
}

/** `count` events of a long journey, oldest first. */
export function longJourney(count: number): ScannedShipment {
  const events: EventInput[] = Array.from({ length: count }, (_, i) => ({
    status: 'in_transit',
    code: 'received',
    hoursAgo: count - i,
    description: `Shipment received at facility and forwarded towards destination hub, bag ${String(i).padStart(4, '0')}`,
    location: 'Bengaluru_Nelmngla_H (Karnataka)',
  }));
  return {
    record: record({ status: 'in_transit', stage: 'in_transit', events, prediction: prediction('2026-11-28', '2026-11-30', '2026-11-27') }),
    running_late: true,
    promised_by: '2026-11-27',
  };
}

export const BRANDING: PageBranding = {
  name: 'Chai & Chutney Co.',
  accent_color: '#7a1f5c',
  support_url: 'https://help.example.in/orders',
  mask_awb: false,
};

export const switchUrl = (lang: string) => `/t/tok_abc123?lang=${lang}`;
