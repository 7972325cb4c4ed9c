import { z } from 'zod';
import { LocationSchema } from './carrier-poll.ts';
import { POSITIONS } from './position.ts';

/** UTC ISO 8601 with milliseconds, e.g. 2026-11-20T03:45:00.000Z. */
export const UtcMillis = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'UTC ISO 8601 with milliseconds');
const nullableTime = UtcMillis.nullable();

export const STATUSES = [
  'pending', 'order_placed', 'awaiting_pickup', 'picked_up', 'shipped', 'in_transit',
  'out_for_delivery', 'delivered', 'exception', 'returned', 'cancelled',
] as const;
export type Status = (typeof STATUSES)[number];

/** The spec's event codes, plus `unknown` for scans no mapping rule knows (decisions.md). */
export const EVENT_CODES = [
  'booked', 'bagged', 'received', 'dispatched', 'picked_up', 'out_for_delivery', 'delivered',
  'delivery_attempted', 'rto_initiated', 'rto_delivered', 'exception', 'unknown',
] as const;
export type EventCode = (typeof EVENT_CODES)[number];

export const STAGES = [
  'awaiting_pickup', 'in_transit', 'out_for_delivery', 'delivery_attempted', 'delivered',
  'rto_in_transit', 'rto_delivered', 'cancelled', 'exception',
] as const;
export type Stage = (typeof STAGES)[number];

export const NDR_REASONS = [
  'customer_unavailable', 'address_issue', 'refused', 'premises_closed', 'cod_not_ready', 'other',
] as const;
export type NdrReason = (typeof NDR_REASONS)[number];

export const ATTENTION_REASONS = ['stuck', 'failed_attempt', 'exception'] as const;
export type AttentionReason = (typeof ATTENTION_REASONS)[number];

export const ShipmentObjectSchema = z.object({
  service_type: z.string().nullable(),
  weight_grams: z.number().int().nullable(),
  origin: LocationSchema.nullable(),
  destination: LocationSchema.nullable(),
  booked_at: nullableTime,
});

export const MilestonesSchema = z.object({
  booked_at: nullableTime,
  picked_up_at: nullableTime,
  in_transit_at: nullableTime,
  out_for_delivery_at: nullableTime,
  first_attempt_at: nullableTime,
  delivered_at: nullableTime,
  rto_initiated_at: nullableTime,
  rto_delivered_at: nullableTime,
});
export type Milestones = z.infer<typeof MilestonesSchema>;

export const AttemptSchema = z.object({
  at: UtcMillis,
  outcome: z.enum(['failed', 'delivered']),
  reason_code: z.enum(NDR_REASONS).nullable(),
  reason_text: z.string().nullable(),
});
export type Attempt = z.infer<typeof AttemptSchema>;

export const BenchmarkSchema = z.object({
  median_transit_days_for_route: z.number().nullable(),
  sample_size: z.number().int().nullable(),
  expected_delivery_by: nullableTime,
});
export type Benchmark = z.infer<typeof BenchmarkSchema>;

const IstDaySchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'an IST calendar day, YYYY-MM-DD');

/** contracts.md "Delivery prediction": the most likely IST delivery day, its windows and basis. */
export const PredictionSchema = z.object({
  delivery_date: IstDaySchema,
  // [first, last] day, both included (arrays of two: OpenAPI clients read tuples poorly).
  window: z.object({ p80: z.array(IstDaySchema).length(2), p90: z.array(IstDaySchema).length(2) }),
  on_time_probability: z.number().min(0).max(1).nullable(),
  basis: z.object({
    level: z.enum(['lane', 'state_pair', 'zone', 'carrier']),
    sample_size: z.number().int().nonnegative(),
    stage: z.enum(STAGES),
    position: z.enum(POSITIONS).nullable()
      .describe('Where the parcel was taken to be, from its latest scan\'s place: the answer\'s cell is of this position; null when it fell back past it'),
    model_at: UtcMillis,
  }),
  // Only on the records of a watch with promised_by (contracts.md "A shop's promise").
  promise: z.object({
    promised_by: IstDaySchema,
    on_time_probability: z.number().min(0).max(1),
  }).optional().describe('Only on the records of a watch with promised_by: P(delivered by the end of that IST day); 0 once it has passed'),
});
export type PredictionJson = z.infer<typeof PredictionSchema>;

export const InsightsSchema = z.object({
  transit_days_elapsed: z.number().nullable(),
  hours_since_last_scan: z.number().nullable(),
  is_stuck: z.boolean(),
  is_late_vs_carrier_edd: z.boolean().nullable(),
  delay_days_vs_carrier_edd: z.number().nullable(),
  hub_count: z.number().int().nonnegative(),
  current_stage: z.enum(STAGES),
  requires_attention: z.boolean(),
  attention_reason: z.enum(ATTENTION_REASONS).nullable(),
  benchmark: BenchmarkSchema,
  prediction: PredictionSchema.nullable(),
});
export type Insights = z.infer<typeof InsightsSchema>;

export const EventSchema = z.object({
  event_id: z.string(),
  timestamp: UtcMillis,
  status: z.enum(STATUSES),
  status_text: z.string(),
  code: z.enum(EVENT_CODES),
  /** NDR reason of a failed attempt or hold; null otherwise (an addition to the spec's event shape). */
  reason_code: z.enum(NDR_REASONS).nullable(),
  facility: z.string(),
  location: z.string(),
  description: z.string(),
  /** Content hash of the mapping rules that produced this event (replay compares rule sets by it). */
  mapping_version: z.string(),
});
export type TrackingEvent = z.infer<typeof EventSchema>;

export const TrackingRecordSchema = z.object({
  awb: z.string(),
  tracking_number: z.string(),
  carrier: z.string(),
  status: z.enum(STATUSES),
  status_text: z.string(),
  is_delivered: z.boolean(),
  is_rto: z.boolean(),
  origin: LocationSchema.nullable(),
  destination: LocationSchema.nullable(),
  estimated_delivery_at: nullableTime,
  delivered_at: nullableTime,
  first_scan_at: nullableTime,
  last_location: z.string().nullable(),
  last_known_location: z.string().nullable(),
  last_updated_at: UtcMillis,
  last_polled_at: UtcMillis,
  cached: z.boolean(),
  stale: z.boolean(),
  mapping_version: z.string(),
  shipment: ShipmentObjectSchema,
  milestones: MilestonesSchema,
  delivery_attempts: z.object({ count: z.number().int().nonnegative(), attempts: z.array(AttemptSchema) }),
  insights: InsightsSchema,
  events: z.array(EventSchema),
});
export type TrackingRecord = z.infer<typeof TrackingRecordSchema>;

export const UsageRecordSchema = z.object({
  key_prefix: z.string(),
  plan: z.enum(['trial', 'starter', 'growth', 'business']),
  status: z.enum(['active', 'suspended', 'revoked', 'expired']),
  period: z.object({
    start: UtcMillis,
    end: UtcMillis,
    lookups_used: z.number().int().nonnegative(),
    lookups_limit: z.number().int().nonnegative(),
    lookups_remaining: z.number().int().nonnegative(),
  }),
  rate_limits: z.object({ burst_per_second: z.number().int().positive(), daily_quota: z.number().int().positive() }),
  /** Growth and business keys: the shipment analyzer's allowance of the period (contracts.md). */
  analyzer: z.object({ shipments_used: z.number().int().nonnegative(), shipments_limit: z.number().int().positive() }).optional(),
  /** Plans with customer notices: the notices sent in the period and the plan's allowance (contracts.md). */
  notices: z.object({ used: z.number().int().nonnegative(), limit: z.number().int().positive() }).optional(),
});
export type UsageRecord = z.infer<typeof UsageRecordSchema>;

export const ERROR_CODES = [
  'invalid_awb', 'unsupported_carrier', 'missing_api_key', 'invalid_api_key', 'payment_required',
  'shipment_not_found', 'rate_limit_exceeded', 'plan_quota_exceeded', 'daily_quota_exceeded',
  'upstream_error', 'not_found', 'method_not_allowed', 'internal_error', 'bad_request', 'unauthorized',
  'conflict', 'invalid_url', 'too_many_endpoints',
  'invalid_pincode',
  // GET /v1/estimate's ship_date (contracts.md "Delivery prediction").
  'invalid_date',
  'carrier_not_detected', 'idempotency_key_reused',
  // The shipment analyzer (contracts.md, decisions.md "Errors").
  'plan_feature_unavailable', 'analyzer_quota_exceeded', 'invalid_analysis', 'analysis_not_found',
  // Hostile or malformed HTTP (apps/api/http/hardening.ts): the status each names, in the standard body.
  'payload_too_large', 'unsupported_media_type', 'header_fields_too_large', 'request_timeout',
  'too_many_attempts',
  // Paying (apps/api/routes/billing.ts): the gateway's webhook.
  'invalid_signature', 'payment_in_progress',
  // A key's branding of its tracking pages (contracts.md "Tracking page"): PUT /v1/branding.
  'invalid_branding',
  // A watch's customer contact (contracts.md "Customer notices"): no consent, or a contact that cannot be used.
  'consent_required', 'invalid_customer',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ErrorBodySchema = z.object({
  error: z.object({ code: z.enum(ERROR_CODES), message: z.string().min(1), request_id: z.string() }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
