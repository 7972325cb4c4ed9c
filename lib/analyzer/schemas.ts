/**
 * The analyzer's request and response shapes as zod schemas, in one place: the routes answer
 * these shapes, the OpenAPI document is generated from them, and the tests parse answers with them.
 */
import { z } from 'zod';
import { ATTENTION_REASONS, AWB_RULE, NDR_REASONS, STAGES, UtcMillis } from '../schemas/index.ts';
import { MAX_ANALYSIS_ROWS } from './input.ts';
import { ANALYSIS_STATUSES, OUTCOMES, PAYMENT_MODES } from './types.ts';

const rate = z.number().min(0).max(1).nullable();

export const AnalysisShipmentInputSchema = z.object({
  awb: z.string().describe(`Consignment number: ${AWB_RULE}`),
  carrier: z.string().optional().describe('Slug or alias; left out: auto-detected from the number'),
  order_id: z.string().optional(),
  payment_mode: z.enum(PAYMENT_MODES).optional(),
  order_value_inr: z.number().nonnegative().optional(),
  promised_by: z.string().optional().describe('ISO date (the end of that day in IST) or date-time (no offset: IST)'),
});

export const AnalysisRequestSchema = z.object({
  name: z.string().max(200).optional(),
  shipments: z.array(AnalysisShipmentInputSchema).min(1).max(MAX_ANALYSIS_ROWS),
});

export const RejectedRowSchema = z.object({
  row: z.number().int().positive().describe('1-based data row'),
  awb: z.string().nullable(),
  code: z.enum(['invalid_awb', 'unsupported_carrier', 'carrier_not_detected', 'invalid_field']),
});

export const AnalysisAcceptedSchema = z.object({
  id: z.string().regex(/^an_/),
  status: z.literal('queued'),
  shipments: z.number().int().positive().describe('Distinct shipments (carrier + AWB) counted against the analyzer allowance'),
  created_at: UtcMillis,
  rejected_rows: z.array(RejectedRowSchema),
});

export const GroupSchema = z.object({
  shipments: z.number().int(), delivered: z.number().int(), rto: z.number().int(), cancelled: z.number().int(),
  exception: z.number().int(), in_transit: z.number().int(), pending: z.number().int(),
  delivered_rate: rate, rto_rate: rate, ndr_rate: rate, first_attempt_rate: rate,
  ndr_reasons: z.record(z.string(), z.number()),
  p50_transit_days: z.number().nullable(), p90_transit_days: z.number().nullable(),
  on_time_rate_vs_carrier_edd: rate, on_time_rate_vs_promise: rate,
  stuck: z.number().int(),
});

export const LaneNetworkSchema = z.object({
  sample_size: z.number().int().min(30), p50_transit_days: z.number().nullable(), on_time_rate: rate, rto_rate: rate, first_attempt_rate: rate,
});

const RecommendationFiguresSchema = z.object({
  carrier: z.string(), sample_size: z.number().int().min(30), p50_transit_days: z.number(), rto_rate: z.number(),
});

export const ReportSchema = z.object({
  as_of: UtcMillis,
  totals: z.object({
    shipments: z.number().int(), found: z.number().int(), not_found: z.number().int(), errors: z.number().int(),
    by_outcome: z.object(Object.fromEntries(OUTCOMES.map((o) => [o, z.number().int()])) as Record<(typeof OUTCOMES)[number], z.ZodNumber>),
  }),
  by_carrier: z.array(GroupSchema.extend({ carrier: z.string() })),
  by_lane: z.array(GroupSchema.extend({
    carrier: z.string(), lane: z.string(), origin_prefix: z.string(), destination_prefix: z.string(), network: LaneNetworkSchema.nullable(),
  })),
  by_destination_state: z.array(GroupSchema.extend({ state: z.string() })),
  by_payment_mode: z.array(GroupSchema.extend({ payment_mode: z.enum(['cod', 'prepaid', 'unknown']) })),
  attention: z.array(z.object({
    awb: z.string(), carrier: z.string(), reason: z.enum(ATTENTION_REASONS), current_stage: z.enum(STAGES),
    hours_since_last_scan: z.number().nullable(), ndr_reason: z.enum(NDR_REASONS).nullable(),
  })),
  recommendations: z.array(z.object({
    lane: z.string(), current_carrier: z.string(), suggested_carrier: z.string(), reason: z.string(),
    figures: z.object({ current: RecommendationFiguresSchema, suggested: RecommendationFiguresSchema, window_days: z.number().int() }),
  })),
});

export const AnalysisSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  status: z.enum(ANALYSIS_STATUSES),
  status_reason: z.string().nullable().describe('Why a failed analysis stopped (e.g. its key was revoked), or why a running one waits ' +
    '(its key is suspended or expired: it goes on when the key is active again); else null'),
  progress: z.object({ done: z.number().int(), total: z.number().int() }),
  created_at: UtcMillis,
  completed_at: UtcMillis.nullable(),
  rejected_rows: z.array(RejectedRowSchema),
  report: ReportSchema.nullable(),
});

export const AnalysisSummarySchema = AnalysisSchema.omit({ rejected_rows: true, report: true });

export const AnalysisListSchema = z.object({
  analyses: z.array(AnalysisSummarySchema),
  next_cursor: z.string().nullable(),
});

export const ShareLinkSchema = z.object({ url: z.string(), expires_at: UtcMillis });

export const AnalyzerUsageSchema = z.object({ shipments_used: z.number().int().nonnegative(), shipments_limit: z.number().int().positive() });

/** The shipments CSV's columns, in order (contracts.md). */
export const SHIPMENT_CSV_COLUMNS = [
  'awb', 'carrier', 'order_id', 'payment_mode', 'status', 'current_stage', 'outcome', 'attempts', 'first_attempt_delivered',
  'ndr_reasons', 'transit_days', 'origin_pincode', 'destination_pincode', 'lane', 'carrier_edd', 'delivered_at',
  'on_time_vs_carrier_edd', 'on_time_vs_promise', 'is_stuck', 'hours_since_last_scan', 'error',
] as const;
