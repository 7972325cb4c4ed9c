/**
 * Zod schemas of the API's answers and inputs that have no home of their own in lib/, as the
 * routes describe them (openapi/spec.ts). The shapes follow the views the routes build (lib/push,
 * lib/lanes, lib/detect, lib/access).
 */
import { z } from 'zod';
import { PLAN_NAMES } from '../../../lib/config/index.ts';
import { EventSchema, PredictionSchema, STAGES, STATUSES, TrackingRecordSchema, UsageRecordSchema } from '../../../lib/schemas/index.ts';
import {
  AnalysisAcceptedSchema, AnalysisListSchema, AnalysisRequestSchema, AnalysisSchema, ReportSchema, ShareLinkSchema,
} from '../../../lib/analyzer/index.ts';
import type { Product } from '../../../lib/product/index.ts';
import { PAGE_LANGUAGES, SUBSCRIBABLE_EVENT_TYPES, TRACKING_EVENT_TYPES } from '../../../lib/push/index.ts';
import { BrandingSchema } from '../../../lib/branding/index.ts';
import { NOTICE_CHANNELS } from '../../../lib/buyer-notices/index.ts';

const Instant = z.string().describe('UTC ISO 8601 instant');

/** A consignment number as the routes accept it (lib/schemas/awb.ts parseAwb, via lookup/awb-input.ts). */
export const AwbParam = z.string().min(1).describe('Consignment number (alias name: tracking_number): 4 to 40 of [A-Za-z0-9-] once trimmed.');

/** A carrier's slug or alias; the enum lists them for clients. */
export function carrierParam(product: Product): z.ZodType {
  const carriers = product.registry.list();
  const names = carriers.flatMap((c) => [c.slug, ...c.aliases]);
  return z.enum(names as [string, ...string[]])
    .describe(`Canonical slug or alias: ${carriers.map((c) => [c.slug, ...c.aliases].join(' | ')).join('; ')}. `
      + 'Anything else is refused (400 unsupported_carrier).');
}

export const PincodeParam = z.string().describe('6-digit Indian pincode');

export const WatchSchema = z.object({
  carrier: z.string(),
  awb: z.string(),
  status: z.enum(['active', 'ended']),
  watched_since: Instant,
  expires_at: Instant,
  promised_by: z.string().nullable().describe('The day the shop promised its customer (IST, YYYY-MM-DD); null: none'),
  running_late_below: z.number().min(0).max(1).describe('tracking.running_late when the on-time probability falls below this (default 0.5)'),
  order_id: z.string().nullable().describe('The shop\'s order this parcel belongs to; null: none'),
  language: z.enum(PAGE_LANGUAGES).nullable().describe('The language of the shop\'s customer: the tracking page\'s default; null: from the browser'),
  page_url: z.string().describe('The tracking page of this shipment for the shop\'s customer: no key needed, no lookup consumed, noindex'),
  order_page_url: z.string().nullable().describe('The page of every watched parcel of order_id; null without order_id'),
  customer: z.object({
    channels: z.array(z.enum(NOTICE_CHANNELS)).describe('The channels notices try, in order (a failed one falls back to the next)'),
    language: z.string().describe('The language of the notices'),
    phone: z.string().nullable().describe('Masked: +91******1234'),
    email: z.string().nullable().describe('Masked: r***@example.com'),
  }).nullable().describe('The customer contact given for notices, masked (never shown in full); null: none, or erased'),
});

export const WatchAnswerSchema = z.object({
  watch: WatchSchema,
  tracking: TrackingRecordSchema.nullable().describe('Null while the carrier has no scans of the shipment'),
});
export const OneWatchSchema = z.object({ watch: WatchSchema });
export const WatchListSchema = z.object({ watches: z.array(WatchSchema), next_cursor: z.string().nullable() });
export const PageQuerySchema = z.object({
  cursor: z.string().optional().describe('next_cursor of the previous page'),
  limit: z.int().min(1).max(100).default(50).optional(),
});
export const LimitQuerySchema = z.object({ limit: z.int().min(1).max(100).default(50).optional() });

export const EndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(SUBSCRIBABLE_EVENT_TYPES)),
  description: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  disabled_reason: z.enum(['gone', 'failing']).nullable(),
  created_at: Instant,
});
export const EndpointWithSecretSchema = EndpointSchema.extend({ secret: z.string().describe('whsec_…: shown only here and on rotation') });
export const EndpointListSchema = z.object({ webhooks: z.array(EndpointSchema) });
export const RotatedSecretSchema = z.object({ id: z.string(), secret: z.string(), previous_secret_valid_until: Instant });
export const SentEventSchema = z.object({ event_id: z.string(), type: z.string() });
export const DeliveriesSchema = z.object({
  deliveries: z.array(z.object({
    event_id: z.string(),
    type: z.string(),
    carrier: z.string().nullable().describe('The shipment the event was about; null for webhook.test (and attempts recorded before 2026-11-28)'),
    awb: z.string().nullable(),
    attempt: z.int().min(1),
    status_code: z.int().nullable(),
    latency_ms: z.number().min(0),
    error: z.string().nullable(),
    attempted_at: Instant,
    next_attempt_at: Instant.nullable().describe('Null when delivered, given up, or waiting for the endpoint to be enabled'),
  })),
});
export const EndpointIdParams = z.object({ id: z.string() });

const rate = z.number().min(0).max(1).nullable();
export const LaneComparisonSchema = z.object({
  origin_prefix: z.string(),
  destination_prefix: z.string(),
  window_days: z.int().min(1),
  carriers: z.array(z.object({
    carrier: z.string(),
    sample_size: z.int().min(0).describe('Delivered shipments in the window'),
    p50_transit_days: z.number().nullable(),
    p90_transit_days: z.number().nullable(),
    on_time_rate: rate.describe('Delivered by the carrier EDD, of deliveries that had one'),
    first_attempt_rate: rate.describe('Delivered with no failed attempt first'),
    rto_rate: rate.describe('Returned to origin, of delivered + returned'),
    ndr_reasons: z.record(z.string(), z.number()).nullable().describe('Reason code → share of failed attempts'),
  })),
  fastest: z.string().nullable().describe('Lowest p50 among carriers with figures'),
  most_reliable: z.string().nullable().describe('Highest on-time rate among carriers with figures'),
});

/** GET /v1/estimate (contracts.md "Delivery prediction"): per carrier and service type, from the booked stage. */
export const EstimateAnswerSchema = z.object({
  origin_pincode: z.string(),
  destination_pincode: z.string(),
  ship_date: z.string().describe('The IST day the shipment is handed over (YYYY-MM-DD): the one asked, or today'),
  estimates: z.array(z.object({
    carrier: z.string(),
    service_type: z.string().nullable().describe('As learned, lower case; null for carriers whose scans show none'),
    delivery_date: PredictionSchema.shape.delivery_date.describe('The most likely delivery day (IST)'),
    window: PredictionSchema.shape.window.describe('[first, last] IST days holding about 80 % and 90 % of deliveries, both included'),
    basis: PredictionSchema.shape.basis
      .describe('The level answered from, its delivered shipments for the stage, the stage (awaiting_pickup) and when the model was built'),
  })),
  fastest: z.string().nullable().describe('The carrier with the earliest delivery_date (then the earliest p80 end, p90 end, slug) among estimates '
    + 'whose basis.level is lane or state_pair; null when none is'),
});
export const EstimateQuerySchema = z.object({
  ship_date: z.string().optional().describe('YYYY-MM-DD (IST): from yesterday to 90 days after today; default today (IST). Anything else is 400 invalid_date.'),
  carrier: z.string().optional().describe('A carrier slug or alias (else 400 unsupported_carrier); default every carrier with a basis'),
  service_type: z.string().optional().describe('Only this service type (as carriers name it, any case); default every one learned'),
});

export const BatchResultSchema = z.union([
  z.object({ index: z.int().min(0), status: z.literal(200), tracking: TrackingRecordSchema }),
  z.object({
    index: z.int().min(0),
    status: z.union([z.literal(400), z.literal(404), z.literal(429), z.literal(502)]),
    error: z.object({
      code: z.enum([
        'invalid_awb', 'unsupported_carrier', 'carrier_not_detected', 'shipment_not_found', 'daily_quota_exceeded', 'plan_quota_exceeded', 'upstream_error',
      ]),
      message: z.string(),
    }),
  }),
]);
export const BatchAnswerSchema = z.object({ results: z.array(BatchResultSchema) });
export const BatchRequestSchema = z.object({
  items: z.array(z.object({
    carrier: z.string().nullish().describe('Slug or alias; omit to detect the carrier from the number'),
    awb: z.string(),
  })).min(1).max(100),
});
export const IdempotencyHeaders = z.object({
  'Idempotency-Key': z.string().min(1).max(255).optional()
    .describe('The same key and body within 24 h returns the first answer (header Idempotent-Replayed: true) and consumes nothing; '
      + 'another body → 422 idempotency_key_reused. Scoped to the API key.'),
});

export const CarrierListSchema = z.object({
  carriers: z.array(z.object({
    slug: z.string(),
    name: z.string(),
    aliases: z.array(z.string()),
    example_awb: z.string().nullable().describe('A number of this carrier\'s shape; the sandbox (trk_test_ keys) answers it'),
  })),
});
export const DetectAnswerSchema = z.object({
  candidates: z.array(z.object({
    slug: z.string(),
    name: z.string(),
    confidence: z.number().min(0).max(1).describe('Share of this carrier among the sample of real-shaped numbers of the same shape'),
  })).describe('Carriers whose shapes fit, most likely first (empty: none fits)'),
});

export const HealthSchema = z.object({ status: z.literal('ok') });
export const ReadinessSchema = z.object({
  status: z.enum(['ready', 'degraded', 'not_ready']),
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), error: z.string().optional() })),
});

/**
 * What a webhook delivery's body is (contracts.md "Push", "Delivery prediction"; lib/push/events.ts
 * makes them): the documents' `webhooks`, so a generated client types the events it receives.
 */
const trackingEventData = {
  carrier: z.string(),
  awb: z.string(),
  sequence: z.int().min(1).describe('Per key and shipment, from 1, one more per event: drop a stale one'),
  previous: z.object({ status: z.enum(STATUSES), current_stage: z.enum(STAGES) }).nullable().describe('What the key was told last; null before the first scan'),
  new_events: z.array(EventSchema).describe('Events not in the last one told (none for tracking.eta_changed)'),
  // Undescribed, so the documents refer to the one TrackingRecord rather than repeat it.
  tracking: TrackingRecordSchema,
};
/** The events with shapes of their own beside the change types. */
export const OWN_SHAPE_EVENT_TYPES: ReadonlySet<string> = new Set(['tracking.eta_changed', 'tracking.running_late']);
const CHANGE_EVENT_TYPES = TRACKING_EVENT_TYPES.filter((t) => !OWN_SHAPE_EVENT_TYPES.has(t)) as [string, ...string[]];
export const TrackingEventBodySchema = z.object({
  type: z.enum(CHANGE_EVENT_TYPES),
  timestamp: Instant.describe('When the change was learned (the poll\'s time)'),
  data: z.object(trackingEventData),
});
export const EtaChangedEventBodySchema = z.object({
  type: z.literal('tracking.eta_changed'),
  timestamp: Instant.describe('When the move was learned (the poll\'s time)'),
  data: z.object({
    ...trackingEventData,
    previous_delivery_date: PredictionSchema.shape.delivery_date
      .describe('The delivery day told before (IST); tracking.insights.prediction.delivery_date is the new one'),
  }),
});
export const RunningLateEventBodySchema = z.object({
  type: z.literal('tracking.running_late'),
  timestamp: Instant.describe('When the fall was learned (the poll\'s time)'),
  data: z.object({
    ...trackingEventData,
    promised_by: z.string().nullable().describe('The watch\'s promised day (IST, YYYY-MM-DD); null: the probability is the carrier EDD\'s'),
    on_time_probability: z.number().min(0).max(1)
      .describe('P(delivered by the end of promised_by, else of the carrier EDD\'s day): below the watch\'s running_late_below'),
    delivery_date: PredictionSchema.shape.delivery_date.describe('The predicted delivery day (IST), as in tracking.insights.prediction'),
  }),
});
export const TestEventBodySchema = z.object({
  type: z.literal('webhook.test'),
  timestamp: Instant,
  data: z.object({ endpoint_id: z.string(), message: z.string() }),
});

/** The admin API's view of a key: its usage record, e-mail address and mode. */
export const KeyViewSchema = UsageRecordSchema.extend({ email: z.string(), mode: z.enum(['live', 'test']) });
export const CreatedKeySchema = z.object({
  key: z.string().describe('The full key: shown only here'),
  key_prefix: z.string(),
  plan: z.enum(PLAN_NAMES),
  status: UsageRecordSchema.shape.status,
  email: z.string(),
  mode: z.enum(['live', 'test']),
  period: UsageRecordSchema.shape.period,
  rate_limits: UsageRecordSchema.shape.rate_limits,
});
export const KeyPrefixParams = z.object({ prefix: z.string().describe('trk_live_ or trk_test_ and 7 letters or digits') });

/** The names under which the documents share these schemas (components/schemas). */
export const SCHEMA_NAMES = new Map<z.ZodType, string>([
  [WatchSchema, 'Watch'], [WatchAnswerSchema, 'WatchAnswer'], [OneWatchSchema, 'OneWatch'], [WatchListSchema, 'WatchList'],
  [EndpointSchema, 'Endpoint'], [EndpointWithSecretSchema, 'EndpointWithSecret'], [EndpointListSchema, 'EndpointList'],
  [RotatedSecretSchema, 'RotatedSecret'], [SentEventSchema, 'SentEvent'], [DeliveriesSchema, 'Deliveries'],
  [LaneComparisonSchema, 'LaneComparison'], [EstimateAnswerSchema, 'EstimateAnswer'],
  [TrackingEventBodySchema, 'TrackingEventBody'], [EtaChangedEventBodySchema, 'EtaChangedEventBody'],
  [RunningLateEventBodySchema, 'RunningLateEventBody'], [TestEventBodySchema, 'TestEventBody'],
  [BatchResultSchema, 'BatchResult'], [BatchAnswerSchema, 'BatchResponse'],
  [BatchRequestSchema, 'BatchRequest'], [CarrierListSchema, 'CarrierList'], [DetectAnswerSchema, 'DetectResponse'],
  [AnalysisRequestSchema, 'AnalysisRequest'], [AnalysisAcceptedSchema, 'AnalysisAccepted'], [AnalysisSchema, 'Analysis'],
  [AnalysisListSchema, 'AnalysisList'], [ReportSchema, 'AnalysisReport'], [ShareLinkSchema, 'ShareLink'],
  [BrandingSchema, 'Branding'],
  [HealthSchema, 'Health'], [ReadinessSchema, 'Readiness'], [KeyViewSchema, 'KeyView'], [CreatedKeySchema, 'CreatedKey'],
]);
