/**
 * The analyzer's data (contracts.md "Shipment analyzer"): what a customer sends per shipment, what
 * the background run learns of it, and the report. Plain data, no I/O.
 */
import type { Awb, NdrReason, Stage } from '../schemas/index.ts';

export const ANALYSIS_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type AnalysisStatus = (typeof ANALYSIS_STATUSES)[number];
export const PAYMENT_MODES = ['cod', 'prepaid'] as const;
export type PaymentMode = (typeof PAYMENT_MODES)[number];
export const OUTCOMES = ['delivered', 'rto', 'cancelled', 'exception', 'in_transit', 'pending'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** One distinct shipment to analyse (repeated rows of one carrier + AWB already merged). */
export interface ShipmentInput {
  /** Parsed (lib/schemas/awb.ts) by input.ts; an analysis's stored input chunks are read back as written. */
  awb: Awb;
  /** The named carrier's slug, or null: auto-detected among `candidates` at run time. */
  carrier: string | null;
  /** Detection candidates (slugs, best first) when no carrier was named. */
  candidates: string[];
  order_id: string | null;
  payment_mode: PaymentMode | null;
  order_value_inr: number | null;
  /** Epoch ms by which the customer promised delivery (a date: the end of that day in IST). */
  promised_by_ms: number | null;
}

/** A row the input step refused (contracts.md: 1-based data row, consuming nothing). */
export interface RejectedRow {
  row: number;
  awb: string | null;
  code: 'invalid_awb' | 'unsupported_carrier' | 'carrier_not_detected' | 'invalid_field';
}

/**
 * What the run learned of one shipment: the few facts the report and the shipments CSV need, taken
 * from the tracking record when it was looked up. Small on purpose (20,000 of them are stored).
 */
export interface AnalyzedShipment {
  awb: string;
  /** The carrier named or detected; null when detection found no carrier that knows the number. */
  carrier: string | null;
  order_id: string | null;
  payment_mode: PaymentMode | null;
  promised_by_ms: number | null;
  result: 'found' | 'not_found' | 'error';
  status: string | null;
  stage: Stage | null;
  /** Forward delivery attempts, the successful one included (record.delivery_attempts.count). */
  attempts: number;
  /** NDR reason of each failed attempt, oldest first ('other' when the carrier gave none). */
  ndr: NdrReason[];
  /** First physical scan → delivery in days, not rounded (lane statistics' definition); delivered only. */
  transit_days: number | null;
  origin_pincode: string | null;
  destination_pincode: string | null;
  destination_state: string | null;
  /** `carrier:o3:d3`, null without both pincodes. */
  lane: string | null;
  edd_ms: number | null;
  delivered_ms: number | null;
  is_stuck: boolean;
  hours_since_last_scan: number | null;
  error: string | null;
  /**
   * A carrier error where the carrier was not asked at all (its circuit breaker open, or too many
   * calls waiting): retried before those the carrier answered with an error (runner.ts).
   */
  resting?: boolean;
  /** Retry rounds in which this carrier error was looked up again, and was an error again. */
  retries?: number;
}

/** The network's windowed figures of one carrier on one lane (the same as GET /v1/lanes). */
export interface NetworkLaneFigures {
  carrier: string;
  origin_prefix: string;
  destination_prefix: string;
  sample_size: number;
  p50_transit_days: number | null;
  on_time_rate: number | null;
  rto_rate: number | null;
  first_attempt_rate: number | null;
}

export interface Group {
  shipments: number;
  delivered: number;
  rto: number;
  cancelled: number;
  exception: number;
  in_transit: number;
  pending: number;
  delivered_rate: number | null;
  rto_rate: number | null;
  ndr_rate: number | null;
  first_attempt_rate: number | null;
  ndr_reasons: Record<string, number>;
  p50_transit_days: number | null;
  p90_transit_days: number | null;
  on_time_rate_vs_carrier_edd: number | null;
  on_time_rate_vs_promise: number | null;
  stuck: number;
}

export interface LaneNetwork {
  sample_size: number;
  p50_transit_days: number | null;
  on_time_rate: number | null;
  rto_rate: number | null;
  first_attempt_rate: number | null;
}

export interface Totals {
  shipments: number;
  found: number;
  not_found: number;
  errors: number;
  by_outcome: Record<Outcome, number>;
}

export interface AttentionItem {
  awb: string;
  carrier: string;
  reason: 'stuck' | 'failed_attempt' | 'exception';
  current_stage: Stage;
  hours_since_last_scan: number | null;
  ndr_reason: NdrReason | null;
}

export interface RecommendationFigures {
  carrier: string;
  sample_size: number;
  p50_transit_days: number;
  rto_rate: number;
}

export interface Recommendation {
  lane: string;
  current_carrier: string;
  suggested_carrier: string;
  reason: string;
  figures: { current: RecommendationFigures; suggested: RecommendationFigures; window_days: number };
}

export interface Report {
  as_of: string;
  totals: Totals;
  by_carrier: (Group & { carrier: string })[];
  by_lane: (Group & { carrier: string; lane: string; origin_prefix: string; destination_prefix: string; network: LaneNetwork | null })[];
  by_destination_state: (Group & { state: string })[];
  by_payment_mode: (Group & { payment_mode: PaymentMode | 'unknown' })[];
  attention: AttentionItem[];
  recommendations: Recommendation[];
}
